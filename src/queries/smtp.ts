import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { notFound } from "../domain/errors.js";
import { EventType } from "../events/types.js";
import { readDetails } from "./details.js";

/** The SMTP configuration without the password (only whether one is stored). */
export async function getSmtpConfig(deps: Deps, caller: Caller) {
  requireInstancePermission(caller, "iam.write");
  const instanceId = caller.principal.instanceId;
  const config = await deps.store.getSmtpConfig(instanceId);
  if (!config) throw notFound("smtp.not_found", "the instance has no SMTP configuration");
  const { passwordSealed, ...settings } = config;
  return { settings, hasPassword: passwordSealed !== null, details: await readDetails(deps.store, "smtp", instanceId, EventType.smtpAdded) };
}
