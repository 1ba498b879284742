import { bootstrapInstance } from "./commands/bootstrap.js";
import type { Deps } from "./context.js";
import { issueToken } from "./domain/token.js";
import { withPrivateFileAround } from "./support/files.js";
import type { Logger } from "./support/logger.js";
import { StartupError } from "./startup/startup-error.js";

/**
 * On an empty database: creates the instance, first organization and admin, and writes the admin's
 * token to `tokenPath` (mode 0600). The file is written BEFORE the commit and renamed into place
 * after it, so a committed admin always has its token on disk and a failed commit leaves no stray
 * token. A database that is already bootstrapped is left alone.
 *
 * Replicas starting together on an empty shared database may all find no instance: the database allows one
 * (`instances_single`), so one bootstrap commits and the others fail. A replica whose bootstrap failed while an
 * instance now exists lost that race: it writes no token (its admin was never stored) and serves the winner's
 * instance, whose token is in the winner's data dir.
 */
export async function ensureBootstrapped(deps: Deps, tokenPath: string, logger: Logger): Promise<void> {
  if (await deps.store.getInstance()) {
    logger.info("instance already bootstrapped");
    return;
  }
  const token = issueToken(deps.ids.next());
  let result: Awaited<ReturnType<typeof bootstrapInstance>>;
  let committed = false;
  try {
    result = await withPrivateFileAround(tokenPath, `${token.token}\n`, async () => {
      const bootstrapped = await bootstrapInstance(deps, { instanceName: "Gatehouse", organizationName: "Gatehouse", adminUserName: "admin", adminToken: token });
      committed = true;
      return bootstrapped;
    });
  } catch (error) {
    // Only a bootstrap that did not commit can have lost the race; a failure after this one committed is its own: the
    // instance and its admin exist, and only the token file is missing, which `gatehouse recover-admin` writes anew.
    if (committed) {
      const reason = (error as { code?: unknown }).code ?? (error as Error).message;
      throw new StartupError(`the instance was created, but its admin token could not be written to ${tokenPath} (${String(reason)}): fix that, then run gatehouse recover-admin (with this --data-dir) for a new token`, { cause: error });
    }
    const winner = await deps.store.getInstance();
    if (!winner) throw error;
    logger.info({ instanceId: winner.id }, "another replica bootstrapped the instance at the same time; its admin token is in that replica's data dir");
    return;
  }
  logger.info({ ...result, tokenFile: tokenPath }, "bootstrapped a new instance; the admin token is in tokenFile");
}
