import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type User, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";

/** API.md "Input": user and profile names lose their surrounding white space before validation. */
const t = useTestServer();
const users = (protocol: Protocol) => t.clients.client(UserService, protocol, { token: t.server.adminToken });
const human = (user: User | undefined) => {
  if (user?.type.case !== "human") throw new Error("not a human user");
  return user.type.value;
};
const email = (name: string) => ({ email: `${name.trim().replace(/\s/g, "")}@example.com` });

describe.each(PROTOCOLS)("trimming names over %s", (protocol) => {
  it("stores a human user's names without their surrounding white space", async () => {
    const userName = `ada-${protocol}`;
    const { userId } = await users(protocol).createHumanUser({
      userName: `  ${userName}\t `,
      profile: { firstName: "  Ada ", lastName: "\u00a0Lovelace  ", nickName: " Countess ", displayName: "  Ada L. " },
      email: email(userName),
    });
    const { user } = await users(protocol).getUser({ userId });
    expect(user?.userName).toBe(userName);
    expect(human(user).profile).toMatchObject({ firstName: "Ada", lastName: "Lovelace", nickName: "Countess", displayName: "Ada L." });
    // The trimmed name is the one that is unique: the bare name is taken now.
    expect(await failure(users(protocol).createHumanUser({ userName, profile: { firstName: "A", lastName: "L" }, email: email(`${userName}-2`) }))).toMatchObject({
      code: Code.AlreadyExists,
    });
  });

  it("refuses names of white space only with the violations of empty names", async () => {
    const blank = await failure(users(protocol).createHumanUser({ userName: "   ", profile: { firstName: " \t ", lastName: "\n" }, email: email(`blank-${protocol}`) }));
    const empty = await failure(users(protocol).createHumanUser({ userName: "", profile: { firstName: "", lastName: "" }, email: email(`empty-${protocol}`) }));
    expect(blank).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid" });
    const violations = (shape: typeof blank) => shape.fields.map((field, i) => `${field} ${shape.rules[i]}`).sort();
    expect(violations(blank)).toEqual(["profile.first_name string.min_len", "profile.last_name string.min_len", "user_name string.min_len"]);
    expect(violations(blank)).toEqual(violations(empty));
  });

  it("trims a machine user's name the same way", async () => {
    const userName = `bot-${protocol}`;
    const { userId } = await users(protocol).createMachineUser({ userName: ` ${userName}  `, name: "Bot" });
    expect((await users(protocol).getUser({ userId })).user?.userName).toBe(userName);
    expect(await failure(users(protocol).createMachineUser({ userName: "    ", name: "Bot" }))).toMatchObject({ code: Code.InvalidArgument, fields: ["user_name"] });
  });

  it("derives a display name of at most 200 characters from two names of 200, cut between code points", async () => {
    const astral = "😀".repeat(200); // 200 characters, 400 UTF-16 code units
    const { userId } = await users(protocol).createHumanUser({
      userName: `long-${protocol}`,
      profile: { firstName: "x", lastName: astral },
      email: email(`long-${protocol}`),
    });
    const displayName = human((await users(protocol).getUser({ userId })).user).profile!.displayName;
    expect(Array.from(displayName)).toHaveLength(200);
    expect(displayName).toBe(`x ${"😀".repeat(198)}`);

    const { userId: other } = await users(protocol).createHumanUser({
      userName: `longer-${protocol}`,
      profile: { firstName: "f".repeat(199), lastName: "l".repeat(200) },
      email: email(`longer-${protocol}`),
    });
    // The cut falls right after the separating space, which is then trimmed.
    expect(human((await users(protocol).getUser({ userId: other })).user).profile!.displayName).toBe("f".repeat(199));
  });

  it("matches an email verification code case-insensitively, ignoring surrounding white space", async () => {
    const address = `code-${protocol}@example.com`;
    const { userId } = await users(protocol).createHumanUser({
      userName: `code-${protocol}`,
      profile: { firstName: "Code", lastName: "Case" },
      email: { email: address },
      password: "Sup3r-secret!",
    });
    let code = emailCodeIn((await lastMailTo(t.server, address))!)!;
    // A code of digits only (p ≈ 0.05 %) would not show the case rule: ask for a new one then.
    for (let tries = 0; !/[A-Z]/.test(code) && tries < 10; tries++) {
      code = (await users(protocol).resendEmailCode({ userId, returnCode: true })).verificationCode!;
    }
    expect(code).toMatch(/[A-Z]/);
    await users(protocol).verifyEmail({ userId, verificationCode: `  ${code.toLowerCase()} ` });
    expect(human((await users(protocol).getUser({ userId })).user).email?.isEmailVerified).toBe(true);
  });
});

describe("trimming names on the REST route", () => {
  it("trims POST /v1/users/human like every protocol", async () => {
    const response = await fetch(`${t.server.url}/v1/users/human`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ userName: "  rest-ada  ", profile: { firstName: " Ada ", lastName: " Rest " }, email: { email: "rest-ada@example.com" } }),
    });
    expect(response.status).toBe(200);
    const { userId } = (await response.json()) as { userId: string };
    const { user } = await users("connect-json-http1").getUser({ userId });
    expect(user?.userName).toBe("rest-ada");
    expect(human(user).profile).toMatchObject({ firstName: "Ada", lastName: "Rest", displayName: "Ada Rest" });
  });
});
