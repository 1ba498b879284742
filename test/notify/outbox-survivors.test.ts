import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newOutboxRow, openOutboxMessage } from "../../src/notify/outbox.js";

/**
 * An outbox row's message (which carries codes) is sealed under the master key and bound to its row: it
 * opens as the row it was queued in, and a sealed message copied into another row does not open there.
 */
const mail = (code: string) => ({ subject: "Verify your email address", text: `Your code: ${code}`, html: `<p>${code}</p>` });
const row = (masterKey: Buffer, id: string, code: string) =>
  newOutboxRow(masterKey, { id, instanceId: "instance-1", userId: "user-1", template: "verification", recipient: "ada@example.com", mail: mail(code), at: new Date() });

describe("the sealed message of an outbox row", () => {
  it("opens as the row it was queued in", () => {
    const masterKey = randomBytes(32);
    expect(openOutboxMessage(masterKey, row(masterKey, "outbox-1", "AAA111"))).toEqual(mail("AAA111"));
  });

  it("does not open in another row", () => {
    const masterKey = randomBytes(32);
    const first = row(masterKey, "outbox-a", "AAA111");
    const second = row(masterKey, "outbox-b", "BBB222");
    expect(() => openOutboxMessage(masterKey, { ...second, messageSealed: first.messageSealed })).toThrow();
    expect(openOutboxMessage(masterKey, second)).toEqual(mail("BBB222"));
  });
});
