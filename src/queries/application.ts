import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { notFound } from "../domain/errors.js";
import type { ApplicationFilter } from "../store/store.js";
import { readDetails, withDetails } from "./details.js";
import { readPage } from "./paging.js";

export async function getApplication(deps: Deps, caller: Caller, ids: { projectId: string; appId: string }) {
  const { project } = await selectProject(deps, caller, ids.projectId, "project.app.read");
  const app = await deps.store.findApplicationById(ids.appId);
  if (!app || app.projectId !== project.id) throw notFound("application.not_found", "the application does not exist in this project", { appId: ids.appId });
  return { app, details: await readDetails(deps.store, "application", app.id) };
}

/** A page of the project's applications in creation order (optionally one state), with the total count. */
export async function listApplications(
  deps: Deps,
  caller: Caller,
  input: { projectId: string; pageSize: number; pageToken: string; state?: ApplicationFilter["state"] },
) {
  const { project } = await selectProject(deps, caller, input.projectId, "project.app.read");
  const filter: ApplicationFilter = { projectId: project.id, ...(input.state ? { state: input.state } : {}) };
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listApplicationsPage({ ...filter, ...window }),
    () => deps.store.countApplications(filter),
  );
  return { apps: await withDetails(deps.store, "application", rows), total, nextPageToken };
}
