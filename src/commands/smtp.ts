import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { normalizeEmail } from "../domain/contact.js";
import { invalidArgument, notFound } from "../domain/errors.js";
import { dropsPassword, parseSmtpHost, sameSettings, smtpPasswordContext, type SmtpSettings } from "../domain/smtp.js";
import { detailsOfChange, detailsOfCreate } from "../events/details.js";
import { EventType } from "../events/types.js";
import { spanOf } from "../queries/details.js";
import type { SmtpConfigRow } from "../store/rows.js";
import { openSecret, sealSecret } from "../support/secret-box.js";
import type { SmtpClientOptions } from "../notify/smtp-transport.js";
import { testSmtp } from "../notify/smtp-test.js";
import { commitAs, detailsOfNoChange, type Expected, expectationOf } from "./commit-as.js";

/**
 * Checks and normalizes settings (sender address syntax, host:port). It copies the five settings by
 * name: callers pass objects that also hold the password, which must never ride along into rows
 * or events.
 */
export function checkSmtpSettings(input: SmtpSettings): SmtpSettings {
  parseSmtpHost(input.host);
  return {
    senderAddress: normalizeEmail(input.senderAddress, "sender_address"),
    senderName: input.senderName,
    tls: input.tls,
    host: input.host,
    user: input.user,
  };
}

async function existingConfig(deps: Deps, instanceId: string): Promise<SmtpConfigRow> {
  const config = await deps.store.getSmtpConfig(instanceId);
  if (!config) throw notFound("smtp.not_found", "the instance has no SMTP configuration; create one first");
  return config;
}

/** Settings as events record them: never the password, only whether there is one. */
const eventPayload = (settings: SmtpSettings, hasPassword: boolean) => ({ ...settings, hasPassword });

export async function createSmtpConfig(deps: Deps, caller: Caller, input: SmtpSettings & { password: string }) {
  requireInstancePermission(caller, "iam.write");
  const instanceId = caller.principal.instanceId;
  const settings = checkSmtpSettings(input);
  const passwordSealed = input.password ? sealSecret(deps.masterKey, input.password, smtpPasswordContext(instanceId)) : null;
  const events = await commitAs(deps, caller, {
    writes: [{ kind: "smtp.insert", row: { instanceId, ...settings, passwordSealed } }],
    events: [{ aggregateType: "smtp", aggregateId: instanceId, type: EventType.smtpAdded, payload: eventPayload(settings, passwordSealed !== null), resourceOwner: instanceId }],
  });
  return { details: detailsOfCreate(events) };
}

/**
 * SPEC 4.2: replaces the configuration; active as soon as saved (the worker reads it for every mail).
 * A new host or user, or tls turned off, drops the stored password. Saving the same settings again
 * changes nothing.
 */
export async function updateSmtpConfig(deps: Deps, caller: Caller, input: SmtpSettings & Expected) {
  requireInstancePermission(caller, "iam.write");
  const instanceId = caller.principal.instanceId;
  const settings = checkSmtpSettings(input);
  const current = await existingConfig(deps, instanceId);
  const expect = expectationOf("smtp", instanceId, input);
  if (sameSettings(current, settings)) return { details: await detailsOfNoChange(deps, { type: "smtp", id: instanceId, createdBy: EventType.smtpAdded }, expect), passwordDropped: false };
  const dropPassword = dropsPassword(current, settings) && current.passwordSealed !== null;
  const span = await smtpSpan(deps, instanceId);
  const events = await commitAs(deps, caller, {
    expect,
    writes: [{ kind: "smtp.update", instanceId, settings, dropPassword }],
    events: [
      {
        aggregateType: "smtp",
        aggregateId: instanceId,
        type: EventType.smtpChanged,
        payload: { ...eventPayload(settings, current.passwordSealed !== null && !dropPassword), passwordDropped: dropPassword },
        resourceOwner: instanceId,
      },
    ],
  });
  return { details: detailsOfChange(events, span.first), passwordDropped: dropPassword };
}

export async function setSmtpPassword(deps: Deps, caller: Caller, input: { password: string } & Expected) {
  requireInstancePermission(caller, "iam.write");
  const instanceId = caller.principal.instanceId;
  await existingConfig(deps, instanceId);
  const span = await smtpSpan(deps, instanceId);
  const events = await commitAs(deps, caller, {
    expect: expectationOf("smtp", instanceId, input),
    writes: [{ kind: "smtp.setPassword", instanceId, passwordSealed: sealSecret(deps.masterKey, input.password, smtpPasswordContext(instanceId)) }],
    events: [{ aggregateType: "smtp", aggregateId: instanceId, type: EventType.smtpPasswordSet, payload: {}, resourceOwner: instanceId }],
  });
  return { details: detailsOfChange(events, span.first) };
}

export async function removeSmtpConfig(deps: Deps, caller: Caller, request: Expected = {}) {
  requireInstancePermission(caller, "iam.write");
  const instanceId = caller.principal.instanceId;
  await existingConfig(deps, instanceId);
  const span = await smtpSpan(deps, instanceId);
  const events = await commitAs(deps, caller, {
    expect: expectationOf("smtp", instanceId, request),
    writes: [{ kind: "smtp.delete", instanceId }],
    events: [{ aggregateType: "smtp", aggregateId: instanceId, type: EventType.smtpRemoved, payload: {}, resourceOwner: instanceId }],
  });
  return { details: detailsOfChange(events, span.first) };
}

/**
 * Dials an SMTP server and sends a test mail: the saved configuration with its saved password, or an
 * unsaved one given in the request with the password given in the request — the saved password
 * never goes to a host it was not saved for.
 */
export async function testSmtpConfig(
  deps: Deps,
  caller: Caller,
  client: SmtpClientOptions,
  input: { receiverAddress: string; config?: SmtpSettings; password: string },
) {
  requireInstancePermission(caller, "iam.write");
  const instanceId = caller.principal.instanceId;
  const receiver = normalizeEmail(input.receiverAddress, "receiver_address");
  if (input.config) {
    const settings = checkSmtpSettings(input.config);
    if (settings.user && !input.password) {
      throw invalidArgument("smtp.password_required", "testing an unsaved configuration with a user needs its password in the request", [
        { field: "password", description: "required with config.user", rule: "smtp.password_required" },
      ]);
    }
    return testSmtp(settings, input.password || undefined, client, receiver);
  }
  const saved = await existingConfig(deps, instanceId);
  const password = saved.passwordSealed ? openSecret(deps.masterKey, saved.passwordSealed, smtpPasswordContext(instanceId)) : undefined;
  // The saved host and password may be committed but not yet durable (group commit): not sent anywhere before.
  await deps.store.durable();
  return testSmtp(saved, password, client, receiver);
}

/** The configuration's events since it was last created: one removed and created again is a new configuration. */
const smtpSpan = (deps: Deps, instanceId: string) => spanOf(deps.store, "smtp", instanceId, EventType.smtpAdded);
