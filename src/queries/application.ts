import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { notFound } from "../domain/errors.js";
import { readDetails, withDetails } from "./details.js";

export async function getApplication(deps: Deps, caller: Caller, ids: { projectId: string; appId: string }) {
  const { project } = await selectProject(deps, caller, ids.projectId, "project.app.read");
  const app = await deps.store.findApplicationById(ids.appId);
  if (!app || app.projectId !== project.id) throw notFound("application.not_found", "the application does not exist in this project", { appId: ids.appId });
  return { app, details: await readDetails(deps.store, "application", app.id) };
}

export async function listApplications(deps: Deps, caller: Caller, projectId: string) {
  const { project } = await selectProject(deps, caller, projectId, "project.app.read");
  return { apps: await withDetails(deps.store, "application", await deps.store.listApplicationsOfProject(project.id)) };
}
