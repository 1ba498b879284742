import { Code } from "@connectrpc/connect";

/** `Code.InvalidArgument` → `invalid_argument`, the spelling of logs, metrics and reasons. */
export function codeName(code: Code | undefined): string {
  return code === undefined ? "ok" : Code[code].replace(/[A-Z]/g, (c, i: number) => (i ? "_" : "") + c.toLowerCase());
}
