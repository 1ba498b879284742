import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EventService } from "../../../gen/gatehouse/admin/v1/event_pb.js";
import type { Deps } from "../../context.js";
import { listEvents } from "../../queries/events.js";
import { callerOf } from "../caller.js";
import { listDetails } from "../convert.js";

export function createEventService(deps: Deps): Partial<ServiceImpl<typeof EventService>> {
  return {
    async listEvents(request, context) {
      const page = await listEvents(deps, callerOf(context), {
        aggregateType: request.aggregateType,
        aggregateId: request.aggregateId,
        fromSequence: Number(request.fromSequence),
        pageSize: request.pageSize,
        pageToken: request.pageToken,
      });
      return {
        details: listDetails(page),
        events: page.events.map((event) => ({
          sequence: BigInt(event.sequence),
          creationDate: timestampFromDate(event.createdAt),
          aggregateType: event.aggregateType,
          aggregateId: event.aggregateId,
          aggregateVersion: BigInt(event.aggregateVersion),
          eventType: event.type,
          payload: event.payload as JsonObject,
          actor: event.actor,
          resourceOwner: event.resourceOwner,
        })),
      };
    },
  };
}
