import type { Client } from "@connectrpc/connect";
import type { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";

/**
 * The sequence of the newest event in the whole log, however many events earlier tests wrote: the
 * log is read from the end of the previous page on (a first page alone holds only the oldest events).
 */
export async function lastSequence(events: Client<typeof EventService>): Promise<bigint> {
  let last = 0n;
  for (;;) {
    const page = await events.listEvents({ fromSequence: last + 1n, pageSize: 1000 });
    if (page.events.length === 0) return last;
    last = page.events.at(-1)!.sequence;
  }
}
