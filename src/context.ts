import type { Principal } from "./domain/principal.js";
import type { OrganizationRow } from "./store/rows.js";
import type { Store } from "./store/store.js";
import type { Clock } from "./support/clock.js";
import type { IdGenerator } from "./support/ids.js";

/** What commands and queries run against; built once in main.ts (or by a test). */
export interface Deps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  /** 32-byte key that encrypts secrets at rest. */
  /** Never changed in place (keys derived from it are kept per buffer, src/domain/codes.ts): a new key is a new buffer. */
  masterKey: Buffer;
  externalUrl: string;
}

/** Who is calling, and which organization the call names (`x-service-orgid`), if any. */
export interface Caller {
  principal: Principal;
  requestedOrgId: string | undefined;
  /**
   * The row of the principal's own organization (`principal.orgId`) as its authentication read it (or found it cached
   * with the principal), when it did: a call in that organization uses it instead of reading the row again. Whoever
   * builds a Caller around another principal leaves it out. As current as the principal: every write on
   * an organization's row but its insert drops cached principals (store/commit.ts, changesAccess).
   */
  ownOrganization?: OrganizationRow | undefined;
}
