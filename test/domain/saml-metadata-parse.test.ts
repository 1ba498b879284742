import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { parseSamlEntityId, SAML_METADATA_LIMITS as LIMITS } from "../../src/domain/saml-metadata.js";

/**
 * What SAML metadata must be (CreateSamlApplication metadata_xml): well-formed XML with an
 * EntityDescriptor root carrying an entityID, inside the pre-scan bounds. The bounds at their limits
 * are in saml-metadata.test.ts; here: what the pre-scan must not miscount, and the parse rules.
 */
const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const open = `<md:EntityDescriptor xmlns:md="${MD}" entityID="urn:sp">`;
const close = "</md:EntityDescriptor>";

function refusal(xml: string): string {
  try {
    parseSamlEntityId(xml);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "application.saml_metadata_invalid" });
    expect(error.violations).toEqual([{ field: "metadata_xml", rule: "application.saml_metadata_invalid", description: expect.any(String) }]);
    const description = error.violations[0]!.description;
    expect(error.message).toBe(`metadata_xml ${description}`);
    return description;
  }
  return expect.fail("the metadata was accepted");
}

describe("SAML metadata: the parse", () => {
  it("returns the entityID without surrounding white space", () => {
    expect(parseSamlEntityId(`<EntityDescriptor xmlns="${MD}" entityID="  urn:sp:x \n"/>`)).toBe("urn:sp:x");
  });

  it.each([
    ["another namespace", `<md:EntityDescriptor xmlns:md="urn:other" entityID="urn:sp"/>`],
    ["no namespace", `<EntityDescriptor entityID="urn:sp"/>`],
    ["another root element", `<md:EntitiesDescriptor xmlns:md="${MD}" entityID="urn:sp"/>`],
  ])("refuses a root in %s", (_name, xml) => {
    expect(refusal(xml)).toMatch(/EntityDescriptor root element/);
  });

  it("needs an entityID of at most 1024 characters", () => {
    expect(refusal(`<md:EntityDescriptor xmlns:md="${MD}"/>`)).toMatch(/must carry an entityID/);
    expect(refusal(`<md:EntityDescriptor xmlns:md="${MD}" entityID="  "/>`)).toMatch(/must carry an entityID/);
    const id = (length: number) => `urn:${"x".repeat(length - 4)}`;
    expect(parseSamlEntityId(`<md:EntityDescriptor xmlns:md="${MD}" entityID="${id(1024)}"/>`)).toBe(id(1024));
    expect(refusal(`<md:EntityDescriptor xmlns:md="${MD}" entityID="${id(1025)}"/>`)).toMatch(/at most 1024/);
  });

  it.each([
    ["a mismatched end tag", `${open}<b></c>${close}`],
    ["an undefined entity", `${open}<b>&undefined;</b>${close}`],
    ["text outside the root element", `text${open}${close}`],
    // The parser only warns about these two and would go on: XML forbids both.
    ["an unquoted attribute value", `${open}<b a=1/>${close}`],
    ["an attribute without a value", `${open}<b a/>${close}`],
  ])("refuses %s as not well-formed", (_name, xml) => {
    expect(refusal(xml)).toBe("is not well-formed XML");
  });

  it.each([
    ["comment", `${open}<!-- ${close}`],
    ["CDATA section", `${open}<![CDATA[ ${close}`],
    ["processing instruction", `${open}<?pi ${close}`],
    ["end tag", `${open}</md:EntityDescriptor`],
    ["start tag", `${open}<b a="1"`],
  ])("names an unterminated %s", (what, xml) => {
    expect(refusal(xml)).toBe(`is not well-formed XML: unterminated ${what}`);
  });

  it("says why a DOCTYPE is refused", () => {
    expect(refusal(`<!DOCTYPE md:EntityDescriptor>${open}${close}`)).toMatch(/DOCTYPE/);
  });
});

describe("SAML metadata: the pre-scan counts what the parser will see, no more", () => {
  const children = (count: number, child = "<b/>") => child.repeat(count);

  it("white space and text between elements are not elements", () => {
    expect(parseSamlEntityId(`\n${open}${children(LIMITS.maxElements - 1, "\n  <b/>text")}\n${close}`)).toBe("urn:sp");
  });

  it("white space and a comment before the root element add no depth", () => {
    const deepest = open + "<md:Extensions>".repeat(LIMITS.maxDepth - 1) + "</md:Extensions>".repeat(LIMITS.maxDepth - 1) + close;
    expect(parseSamlEntityId(`\n<!-- service provider -->\n${deepest}`)).toBe("urn:sp");
  });

  it("comments, CDATA and processing instructions are skipped whole, however they end", () => {
    const xml = `${open}<!--<a--><![CDATA[<a]]><?pi <a?>${children(LIMITS.maxElements - 1)}${close}`;
    expect(parseSamlEntityId(xml)).toBe("urn:sp");
  });

  it("text that looks like a terminator before a comment or CDATA section does not end it early", () => {
    expect(parseSamlEntityId(`${open}<b>x--><!-- c --></b><![CDATA[a]]><![CDATA[b]]>${close}`)).toBe("urn:sp");
  });

  it("closed siblings do not add depth", () => {
    expect(parseSamlEntityId(`${open}${children(LIMITS.maxDepth + 8, "<b></b>")}${close}`)).toBe("urn:sp");
  });

  it("references are counted from the first character on", () => {
    expect(refusal("&#65;".repeat(LIMITS.maxReferences + 1) + open + close)).toMatch(/references/);
  });

  it("only attributes named xmlns or xmlns:… are namespace declarations", () => {
    const attributes = (name: (i: number) => string) => Array.from({ length: LIMITS.maxNamespaceDeclarations + 1 }, (_, i) => `${name(i)}="1"`).join(" ");
    expect(parseSamlEntityId(`${open}<b ${attributes((i) => `x${i}`)}/>${close}`)).toBe("urn:sp");
    expect(parseSamlEntityId(`${open}<b ${attributes((i) => `dataxmlns${i}`)}/>${close}`)).toBe("urn:sp");
  });

  it("counts a surrogate pair as one character, at the edges of the surrogate ranges too", () => {
    // U+10000 is the pair D800 DC00, U+103FF the pair D800 DFFF: exactly maxChars characters in more UTF-16 units.
    const astral = "\u{10000}".repeat(300_000) + "\u{103FF}".repeat(300_000);
    const filler = " ".repeat(LIMITS.maxChars - 600_000 - open.length - close.length);
    const xml = open + astral + filler + close;
    expect(xml.length).toBeGreaterThan(LIMITS.maxChars);
    expect(parseSamlEntityId(xml)).toBe("urn:sp");
    expect(refusal(open + astral + filler + " " + close)).toMatch(/at most 1000000 characters/);
  });

  it("counts characters above the surrogate range", () => {
    expect(refusal(open + "\uF900".repeat(LIMITS.maxChars) + close)).toMatch(/characters/);
  });
});
