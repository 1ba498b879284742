import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { parseSamlEntityId, SAML_METADATA_LIMITS as LIMITS } from "../../src/domain/saml-metadata.js";

const open = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="urn:sp">`;
const close = "</md:EntityDescriptor>";
/** Metadata whose elements nest `depth` levels deep, the root included. */
const nested = (depth: number) => open + "<md:Extensions>".repeat(depth - 1) + "</md:Extensions>".repeat(depth - 1) + close;
const withChildren = (count: number) => open + "<b/>".repeat(count - 1) + close;
/** The root already carries two attributes (xmlns:md, entityID) and one namespace declaration. */
const withAttributes = (count: number) => open + `<b ${Array.from({ length: count - 2 }, (_, i) => `a${i}='1'`).join(" ")}/>` + close;
const withNamespaces = (count: number) => open + `<b\n${Array.from({ length: count - 1 }, (_, i) => `xmlns:p${i}="urn:${i}"`).join("\t")}/>` + close;
const withReferences = (count: number) => open + "&#65;".repeat(count) + close;
/**
 * The reported bypass: declarations glued to the previous attribute's closing quote (no white space,
 * which xmldom only warns about), each copied into every child below: about 186 KB that cost
 * ~210 ms of parsing while every other bound held.
 */
const gluedNamespaces = (count: number) =>
  open + `<b ${Array.from({ length: count }, (_, i) => `a${i}="1"xmlns:n${i}="urn:${i}"`).join("")}>` + "<md:X/>".repeat(count) + "</b>" + close;

function refusal(xml: string): string {
  try {
    parseSamlEntityId(xml);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const domainError = error as DomainError;
    expect(domainError).toMatchObject({ kind: "invalid_argument", reason: "application.saml_metadata_invalid" });
    expect(domainError.violations.map((v) => v.field)).toEqual(["metadata_xml"]);
    expect(domainError.message.length).toBeLessThanOrEqual(200);
    return domainError.violations[0]!.description;
  }
  return expect.fail("the metadata was accepted");
}

describe("SAML metadata bounds", () => {
  it.each([
    ["nesting depth", nested, LIMITS.maxDepth, /levels deep/],
    ["element count", withChildren, LIMITS.maxElements, /elements/],
    ["attribute count", withAttributes, LIMITS.maxAttributes, /attributes/],
    ["namespace declarations", withNamespaces, LIMITS.maxNamespaceDeclarations, /namespace declarations/],
    ["references", withReferences, LIMITS.maxReferences, /references/],
  ])("accepts %s at the limit and refuses one more", (_name, build, limit, description) => {
    expect(parseSamlEntityId(build(limit))).toBe("urn:sp");
    expect(refusal(build(limit + 1))).toMatch(description);
  });

  it("refuses more characters than the size limit, counting a surrogate pair as one character", () => {
    expect(refusal(open + " ".repeat(LIMITS.maxChars) + close)).toMatch(/characters/);
    const astral = "😀".repeat(0.6 * LIMITS.maxChars); // 600 000 characters, 1 200 000 UTF-16 units
    expect(astral.length + open.length + close.length).toBeGreaterThan(LIMITS.maxChars);
    expect(parseSamlEntityId(open + astral + close)).toBe("urn:sp");
  });

  it("does not count markup inside comments, CDATA, processing instructions or quoted values", () => {
    const hidden = "<b/>".repeat(LIMITS.maxElements);
    const xml = `<?xml version="1.0"?><?pi ${hidden}?><!-- ${hidden} -->${open}<![CDATA[${hidden}]]><b v="a>b" w='c=d'/>${close}`;
    expect(parseSamlEntityId(xml)).toBe("urn:sp");
  });

  it("refuses namespace declarations glued to the previous attribute, however few", () => {
    const bypass = gluedNamespaces(4_990);
    expect(bypass.length).toBeGreaterThan(180_000);
    expect(refusal(bypass)).toMatch(/attributes must be separated by white space/);
    expect(refusal(gluedNamespaces(1))).toMatch(/attributes must be separated by white space/);
    expect(refusal(`${open}<b a='1'b='2'/>${close}`)).toMatch(/white space/);
  });

  it("still accepts attributes separated by any white space, with spaces around = and before /> or >", () => {
    expect(parseSamlEntityId(`${open}<b a = "1"\txmlns:p="urn:p"\r\nc='2'/><c d="1"></c>${close}`)).toBe("urn:sp");
  });

  it.each([
    ["a DOCTYPE", `<!DOCTYPE x>${open}${close}`],
    ["an unterminated comment", `${open}<!-- ${close}`],
    ["an unterminated CDATA section", `${open}<![CDATA[ ${close}`],
    ["an unterminated start tag", `${open}<b a="${close}`],
    ["a mismatched end tag", `${open}<b></c>${close}`],
    ["unclosed elements", `${open}<b><c>`],
  ])("refuses %s with a fixed description that quotes nothing", (_name, xml) => {
    const description = refusal(xml);
    expect(description).not.toMatch(/\b[bc]\b|"/);
  });
});
