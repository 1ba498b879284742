import { describe, expect, it } from "vitest";
import { codeDigest } from "../../src/domain/codes.js";
import { issueToken, parseToken } from "../../src/domain/token.js";

/**
 * Forms that outlive a process: a token's wire form and a code's stored digest. Both must stay exactly as they are
 * across releases — tokens handed out and codes mailed before an upgrade are checked by the version after it.
 */
describe("personal access tokens", () => {
  it("are gh1.<token id>.<secret>, and parse back to their id and secret", () => {
    const issued = issueToken("token-7");
    const [prefix, id, secret] = issued.token.split(".");
    expect([prefix, id]).toEqual(["gh1", "token-7"]);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(parseToken(issued.token)).toEqual({ tokenId: "token-7", secret });
  });

  it.each([
    ["two parts", "gh1.token-7"],
    ["four parts", "gh1.token-7.secret.more"],
    ["another prefix", "gh2.token-7.secret"],
    ["an empty id", "gh1..secret"],
    ["an empty secret", "gh1.token-7."],
    ["nothing", ""],
  ])("with %s is no token at all", (_name, token) => {
    expect(parseToken(token)).toBeUndefined();
  });
});

describe("the stored digest of a one-time code", () => {
  const masterKey = Buffer.alloc(32, 7);

  it("is the same as the releases before computed (codes mailed before an upgrade still verify after it)", () => {
    expect(codeDigest(masterKey, "email", "code-1", "AB12CD")).toBe("8315929d9b79da054d905b267b4e902ca14c45338816119420733178ebccfae3");
  });

  it("does not care how the code is typed: case and surrounding blanks", () => {
    const stored = codeDigest(masterKey, "email", "code-1", "AB12CD");
    for (const typed of ["ab12cd", " AB12CD ", "Ab12Cd\n"]) expect(codeDigest(masterKey, "email", "code-1", typed)).toBe(stored);
  });

  it("is bound to its kind, its id and the master key: the same code elsewhere is a different digest", () => {
    const stored = codeDigest(masterKey, "email", "code-1", "AB12CD");
    expect(codeDigest(masterKey, "init", "code-1", "AB12CD")).not.toBe(stored);
    expect(codeDigest(masterKey, "email", "code-2", "AB12CD")).not.toBe(stored);
    expect(codeDigest(Buffer.alloc(32, 8), "email", "code-1", "AB12CD")).not.toBe(stored);
  });
});
