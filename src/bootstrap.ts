import { bootstrapInstance } from "./commands/bootstrap.js";
import type { Deps } from "./context.js";
import { issueToken } from "./domain/token.js";
import { withPrivateFileAround } from "./support/files.js";
import type { Logger } from "./support/logger.js";

/**
 * On an empty database: creates the instance, first organization and admin, and writes the admin's
 * token to `tokenPath` (mode 0600). The file is written BEFORE the commit and renamed into place
 * after it, so a committed admin always has its token on disk and a failed commit leaves no stray
 * token. A database that is already bootstrapped is left alone.
 */
export async function ensureBootstrapped(deps: Deps, tokenPath: string, logger: Logger): Promise<void> {
  if (await deps.store.getInstance()) {
    logger.info("instance already bootstrapped");
    return;
  }
  const token = issueToken(deps.ids.next());
  const result = await withPrivateFileAround(tokenPath, `${token.token}\n`, () =>
    bootstrapInstance(deps, { instanceName: "Gatehouse", organizationName: "Gatehouse", adminUserName: "admin", adminToken: token }),
  );
  logger.info({ ...result, tokenFile: tokenPath }, "bootstrapped a new instance; the admin token is in tokenFile");
}
