import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { nextApplicationState, requireSecretBased } from "../domain/application.js";
import { DomainError, notFound } from "../domain/errors.js";
import { detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import type { ApplicationRow } from "../store/rows.js";
import type { RowWrite } from "../store/commit.js";
import { randomSecret, sha256Hex } from "../support/crypto.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { spanOf } from "../queries/details.js";

interface AppIds extends Expected {
  projectId: string;
  appId: string;
}

const stateEvents = { deactivate: EventType.applicationDeactivated, reactivate: EventType.applicationReactivated } as const;

/** An application of a project of the selected organization, for a caller holding `project.app.write` there. */
async function selectApplication(deps: Deps, caller: Caller, ids: AppIds) {
  const { organization, project } = await selectProject(deps, caller, ids.projectId, "project.app.write");
  const app = await deps.store.findApplicationById(ids.appId);
  if (!app || app.projectId !== project.id) throw applicationNotFound(ids.appId);
  return { organization, app };
}

/**
 * Commits one change of an application with its event. The writes are conditional, so a change
 * that lost a race answers as the call after the winner would: not_found when the application is
 * gone, otherwise what `recheck` says about its current row (or the store's aborted).
 */
async function commitAppChange(
  deps: Deps,
  caller: Caller,
  target: { organizationId: string; app: ApplicationRow; request: Expected },
  change: { write: RowWrite; type: string; payload: Record<string, unknown>; recheck?: (now: ApplicationRow) => void },
) {
  const span = await spanOf(deps.store, "application", target.app.id);
  try {
    const events = await commitAs(deps, caller, {
      expect: expectationOf("application", target.app.id, target.request),
      writes: [change.write],
      events: [{ aggregateType: "application", aggregateId: target.app.id, type: change.type, payload: change.payload, resourceOwner: target.organizationId }],
    });
    return { details: detailsOfChange(events, span.first) };
  } catch (error) {
    if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
    const now = await deps.store.findApplicationById(target.app.id);
    if (!now) throw applicationNotFound(target.app.id);
    change.recheck?.(now);
    throw error;
  }
}

/**
 * Deactivates or reactivates an application. Nothing else changes: settings, client id and secret
 * hash stay, so reactivating gives back exactly the application that was deactivated.
 */
export async function changeApplicationState(deps: Deps, caller: Caller, ids: AppIds, change: "deactivate" | "reactivate") {
  const { organization, app } = await selectApplication(deps, caller, ids);
  const state = nextApplicationState(app.state, change);
  return commitAppChange(deps, caller, { organizationId: organization.id, app, request: ids }, {
    write: { kind: "application.setState", id: app.id, state },
    type: stateEvents[change],
    payload: {},
    recheck: (now) => nextApplicationState(now.state, change),
  });
}

/** Removes an application; nothing else refers to one, and its name is free again in the project. */
export async function removeApplication(deps: Deps, caller: Caller, ids: AppIds) {
  const { organization, app } = await selectApplication(deps, caller, ids);
  return commitAppChange(deps, caller, { organizationId: organization.id, app, request: ids }, {
    write: { kind: "application.delete", id: app.id },
    type: EventType.applicationRemoved,
    // What identifies it in the audit trail; never the secret hash.
    payload: { projectId: app.projectId, name: app.name, clientId: app.clientId },
  });
}

/**
 * A new client secret, shown once and stored as SHA-256 like at creation. The hash is replaced only
 * if it is still the one read, so the secret returned is always the one that works.
 */
export async function regenerateClientSecret(deps: Deps, caller: Caller, ids: AppIds) {
  const { organization, app } = await selectApplication(deps, caller, ids);
  requireSecretBased(app.settings);
  const clientSecret = randomSecret(32);
  const { details } = await commitAppChange(deps, caller, { organizationId: organization.id, app, request: ids }, {
    write: { kind: "application.replaceSecretHash", id: app.id, previousHash: app.clientSecretHash, hash: sha256Hex(clientSecret) },
    type: EventType.applicationClientSecretRegenerated,
    payload: { clientId: app.clientId },
  });
  return { clientSecret, details };
}

const applicationNotFound = (appId: string) => notFound("application.not_found", "the application does not exist in this project", { appId });
