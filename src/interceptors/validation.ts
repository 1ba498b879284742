import type { Interceptor } from "@connectrpc/connect";
import { createValidator } from "@bufbuild/protovalidate";
import { pathToString } from "@bufbuild/protobuf/reflect";
import { invalidArgument } from "../domain/errors.js";

/**
 * Checks every request against the buf.validate rules of its .proto before the handler runs.
 * Each broken rule becomes one field violation with the field's path (`profile.first_name`,
 * `idps[1].config_id`); the validator collects all of them, not just the first.
 */
export function createValidationInterceptor(): Interceptor {
  const validator = createValidator();
  return (next) => async (req) => {
    if (!req.stream) {
      const result = validator.validate(req.method.input, req.message);
      if (result.kind === "invalid") {
        const violations = result.violations.map((violation) => ({
          field: pathToString(violation.field),
          description: violation.message,
          rule: violation.ruleId,
        }));
        throw invalidArgument("request.invalid", `invalid request: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`, violations);
      }
      if (result.kind === "error") throw result.error;
    }
    return next(req);
  };
}
