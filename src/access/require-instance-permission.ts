import type { Caller } from "../context.js";
import { canInstanceWide } from "../domain/authorization.js";
import { permissionDenied } from "../domain/errors.js";
import type { Permission } from "../domain/roles.js";

/** Throws permission_denied unless the caller holds `permission` instance-wide. */
export function requireInstancePermission(caller: Caller, permission: Permission): void {
  if (!canInstanceWide(caller.principal, permission)) {
    throw permissionDenied("permission.denied", `missing instance permission ${permission}`, { permission });
  }
}
