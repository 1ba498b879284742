import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import {
  type ImportedHumanUserSchema,
  type ImportHumanUserResult,
  type ImportHumanUsersRequestSchema,
  type ImportHumanUsersResponse,
  ImportOutcome,
  type UserService,
} from "../../gen/gatehouse/admin/v1/user_pb.js";

export type ImportedUserInit = MessageInitShape<typeof ImportedHumanUserSchema>;
export type ImportRequestInit = MessageInitShape<typeof ImportHumanUsersRequestSchema>;
export type CreateRequestInit = NonNullable<ImportedUserInit["user"]>;

/** A bcrypt hash of "Analytical-Engine-1843" (cost 4: cheap to verify in tests). */
export const BCRYPT_HASH = "$2b$04$QP0VjXns17EhTqK9lqvYZegW1llDeoGfRN8p3CaXkofbgMJuWm8XG";

/** A user to import, valid as CreateHumanUser takes it (verified email, an imported hash: ACTIVE, no mail). */
export function importedUser(userName: string, user: Partial<CreateRequestInit> = {}, externalId = ""): ImportedUserInit {
  const request = {
    userName,
    profile: { firstName: "Imported", lastName: userName },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
    hashedPassword: { value: BCRYPT_HASH },
    ...user,
  } as CreateRequestInit;
  return { user: request, externalId };
}

/** Sends the messages in one ImportHumanUsers stream, each once the previous one is answered in full, and collects every response. */
export async function streamImport(users: Client<typeof UserService>, messages: ImportRequestInit[]): Promise<ImportHumanUsersResponse[]> {
  const responses: ImportHumanUsersResponse[] = [];
  async function* requests() {
    for (const message of messages) yield message;
  }
  for await (const response of users.importHumanUsers(requests())) responses.push(response);
  return responses;
}

export const outcomeName = (outcome: ImportOutcome) => ImportOutcome[outcome].toLowerCase();

/** A result as tests compare it: index, outcome, and the error's code, reason and violated fields. */
export function resultShape(result: ImportHumanUserResult): { index: number; outcome: string; userId?: string; code?: string; reason?: string | undefined; fields?: string[] } {
  return {
    index: Number(result.index),
    outcome: outcomeName(result.outcome),
    ...(result.error
      ? { code: result.error.code, reason: result.error.errorInfo?.reason, fields: result.error.fieldViolations.map((v) => v.field) }
      : { userId: result.userId }),
  };
}
