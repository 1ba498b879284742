import { describe, expect, it } from "vitest";
import { emailKey } from "../../src/domain/contact.js";

/**
 * The email filter (ListUsers `email`) compares addresses ignoring case, and nothing more: two
 * addresses that differ in a letter, not only in its case, stay different.
 */
describe("email address keys", () => {
  it("ignoring case does not make different letters equal", () => {
    // ß and ss are different domains under IDNA2008; dotless ı is a letter of its own, not i. Upper-casing would merge both pairs.
    expect(emailKey("ada@faß.de")).not.toBe(emailKey("ada@fass.de"));
    expect(emailKey("yıldız@example.com")).not.toBe(emailKey("yildiz@example.com"));
    expect(emailKey("Ada@FAß.de")).toBe(emailKey("ada@faß.DE"));
  });
});
