import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Details as DetailsMessage, DetailsSchema } from "../../gen/gatehouse/admin/v1/details_pb.js";
import type { Details } from "../events/details.js";

/** Domain details → the `Details` message every response carries. */
export function toDetailsMessage(details: Details): DetailsMessage {
  return create(DetailsSchema, {
    sequence: BigInt(details.sequence),
    ...(details.creationDate ? { creationDate: timestampFromDate(details.creationDate) } : {}),
    changeDate: timestampFromDate(details.changeDate),
    resourceOwner: details.resourceOwner,
  });
}

export function optionalDate(timestamp: Timestamp | undefined): Date | undefined {
  return timestamp ? timestampDate(timestamp) : undefined;
}

export function optionalTimestamp(date: Date | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}
