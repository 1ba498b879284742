import { invalidArgument } from "./errors.js";

/**
 * The key under which a name is unique: case-insensitive and independent of Unicode composition,
 * so "Alice", "ALICE" and a decomposed "Alicé" all collide with their look-alikes.
 */
export function uniquenessKey(name: string): string {
  // Stryker disable next-line MethodExpression: upper- or lower-casing both make the key case-insensitive; they part only on letters like ß and ς, whose folding no rule of SPEC decides
  return name.normalize("NFKC").toLowerCase();
}

/**
 * User names are logins: no white space, no control characters. Surrounding white space never gets
 * here (the validation interceptor trims it before the length rules run); inner white space is refused.
 */
export function checkUserName(userName: string, field = "user_name"): void {
  if (/[\s\p{Cc}]/u.test(userName)) {
    throw invalidArgument("user.name_invalid", "user names contain no white space or control characters", [
      { field, description: "must not contain white space or control characters", rule: "user.name_invalid" },
    ]);
  }
}
