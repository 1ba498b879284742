import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { UserService } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import type { Deps } from "../../context.js";

type ImportHandlers = Pick<ServiceImpl<typeof UserService>, "importHumanUsers" | "importHumanUsersBatch">;

/** ImportHumanUsers and ImportHumanUsersBatch (issue 14): being built; answered as not implemented until then. */
export function createImportHandlers(_deps: Deps): ImportHandlers {
  const notYet = () => new ConnectError("bulk import is not implemented yet", Code.Unimplemented);
  return {
    // biome-ignore lint/correctness/useYield: answers at once, before reading anything
    async *importHumanUsers() {
      throw notYet();
    },
    async importHumanUsersBatch() {
      throw notYet();
    },
  };
}
