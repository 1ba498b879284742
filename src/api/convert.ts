import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Details as DetailsMessage, DetailsSchema, type ListDetailsSchema } from "../../gen/gatehouse/admin/v1/details_pb.js";
import type { MemberSchema } from "../../gen/gatehouse/admin/v1/project_pb.js";
import type { Details } from "../events/details.js";
import type { MembershipRow } from "../store/rows.js";

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

/** The total and next-page token of a list → the `ListDetails` every List… response carries. */
export function listDetails(page: { total: number; nextPageToken: string }): MessageInitShape<typeof ListDetailsSchema> {
  return { totalResult: BigInt(page.total), nextPageToken: page.nextPageToken };
}

/** A page of memberships as every List…Members (instance, organization, project, grant) answers it. */
export function toMemberPage(page: { members: { row: MembershipRow; details: Details }[]; total: number; nextPageToken: string }): {
  details: MessageInitShape<typeof ListDetailsSchema>;
  members: MessageInitShape<typeof MemberSchema>[];
} {
  return {
    details: listDetails(page),
    members: page.members.map(({ row, details }) => ({ userId: row.userId, roles: row.roles, details: toDetailsMessage(details) })),
  };
}
