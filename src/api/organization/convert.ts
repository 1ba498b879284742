import type { MessageInitShape } from "@bufbuild/protobuf";
import { OrganizationState, type OrganizationSchema } from "../../../gen/gatehouse/admin/v1/organization_pb.js";
import type { Details } from "../../events/details.js";
import type { OrganizationRow } from "../../store/rows.js";
import { toDetailsMessage } from "../convert.js";

const states: Record<OrganizationRow["state"], OrganizationState> = {
  active: OrganizationState.ACTIVE,
  inactive: OrganizationState.INACTIVE,
};

export function toOrganizationMessage(organization: OrganizationRow, details: Details): MessageInitShape<typeof OrganizationSchema> {
  return { organizationId: organization.id, name: organization.name, state: states[organization.state], details: toDetailsMessage(details) };
}

/** The state filter of ListOrganizations: UNSPECIFIED means any state. */
export function fromOrganizationState(state: OrganizationState): OrganizationRow["state"] | undefined {
  if (state === OrganizationState.ACTIVE) return "active";
  if (state === OrganizationState.INACTIVE) return "inactive";
  return undefined;
}
