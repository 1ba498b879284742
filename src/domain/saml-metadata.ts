import { DOMParser, type Element } from "@xmldom/xmldom";
import { invalidArgument } from "./errors.js";

const METADATA_NS = "urn:oasis:names:tc:SAML:2.0:metadata";
const REASON = "application.saml_metadata_invalid";

/**
 * Bounds of metadata XML, checked by a linear pre-scan before the DOM parser runs. xmldom's cost
 * grows with nesting, element and attribute counts (a megabyte of `<a>` took over a second on the
 * event loop), not with text, so these counts are what is limited. Real SP metadata nests about
 * eight levels deep (Signature › KeyInfo › X509Data …) and holds at most a few hundred elements;
 * the limits leave ample room and keep the worst parse in the tens of milliseconds.
 */
export const SAML_METADATA_LIMITS = {
  maxChars: 1_000_000,
  maxDepth: 32,
  maxElements: 5_000,
  maxAttributes: 10_000,
  /** Each declaration is copied into every element below it, so their count multiplies the cost. */
  maxNamespaceDeclarations: 64,
  /** Entity and character references (`&amp;`, `&#x41;`), each a look-up while parsing. */
  maxReferences: 10_000,
} as const;

/** What may follow an attribute's closing quote in a start tag: white space, `/>` or `>`. */
const ATTRIBUTE_VALUE_FOLLOWER = /[\s/>]/;
/**
 * A character that can continue a name. `xmlns` after anything else starts an attribute name (or
 * the element's own name, an overcount that only errs on the safe side), so it is counted.
 */
const NAME_CHARACTER = /[\p{L}\p{N}._:\-\u00B7\u0300-\u036F\u203F-\u2040]/u;

function invalid(description: string): never {
  throw invalidArgument(REASON, `metadata_xml ${description}`, [{ field: "metadata_xml", description, rule: REASON }]);
}

/** Index just past `terminator` at or after `from`; refuses the document when it never comes. */
function skipPast(xml: string, from: number, terminator: string, what: string): number {
  const end = xml.indexOf(terminator, from);
  // Stryker disable next-line EqualityOperator: the search starts at index 2 or later, so it never finds the terminator at 0
  if (end < 0) invalid(`is not well-formed XML: unterminated ${what}`);
  return end + terminator.length;
}

/** Characters as buf.validate's `max_len` counts them: code points, a surrogate pair being one. */
function codePointCount(text: string): number {
  let count = 0;
  // Stryker disable next-line EqualityOperator: charCodeAt past the end is NaN, which counts as no character
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) count++;
  }
  return count;
}

/**
 * Two passes over the text counting references, start tags, nesting depth, attributes and
 * namespace declarations, refusing as soon as a limit is passed. It is deliberately conservative
 * (apart from attribute separation it leaves well-formedness to the parser), but it never
 * undercounts: every `<name` outside comments, CDATA and processing instructions is an element,
 * every `=` inside a tag outside quotes an attribute, and every `xmlns` that starts a name a
 * namespace declaration.
 */
function checkBounds(xml: string): void {
  const limits = SAML_METADATA_LIMITS;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the length test only skips counting; code points never outnumber UTF-16 units
  if (xml.length > limits.maxChars && codePointCount(xml) > limits.maxChars) invalid(`must be at most ${limits.maxChars} characters`);
  let depth = 0;
  let elements = 0;
  let attributes = 0;
  let namespaces = 0;
  let references = 0;
  for (let r = xml.indexOf("&"); r >= 0; r = xml.indexOf("&", r + 1)) {
    if (++references > limits.maxReferences) invalid(`must have at most ${limits.maxReferences} entity or character references`);
  }
  let i = xml.indexOf("<");
  // Stryker disable next-line ConditionalExpression,EqualityOperator: i is a found index, always inside the text
  while (i >= 0 && i < xml.length) {
    const next = xml[i + 1];
    if (xml.startsWith("<!--", i)) i = skipPast(xml, i + 4, "-->", "comment");
    else if (xml.startsWith("<![CDATA[", i)) i = skipPast(xml, i + 9, "]]>", "CDATA section");
    else if (next === "?") i = skipPast(xml, i + 2, "?>", "processing instruction");
    else if (next === "!") invalid("must not contain a DOCTYPE or other markup declarations");
    else if (next === "/") {
      depth--;
      i = skipPast(xml, i + 2, ">", "end tag");
    } else {
      if (++elements > limits.maxElements) invalid(`must have at most ${limits.maxElements} elements`);
      let j = i + 1;
      let quote = "";
      // Stryker disable next-line EqualityOperator: at j = length the character is undefined, matches no case, and the loop ends the same
      for (; j < xml.length; j++) {
        const c = xml[j];
        if (quote) {
          if (c === quote) {
            quote = "";
            // XML requires white space between attributes. xmldom only warns and reads on, so
            // `a="1"xmlns:n="…"` would be a declaration no count below saw: refuse it here.
            if (!ATTRIBUTE_VALUE_FOLLOWER.test(xml[j + 1] ?? ">")) invalid("is not well-formed XML: attributes must be separated by white space");
          }
        } else if (c === '"' || c === "'") quote = c;
        else if (xml.startsWith("xmlns", j) && !NAME_CHARACTER.test(xml[j - 1]!)) {
          if (++namespaces > limits.maxNamespaceDeclarations) invalid(`must have at most ${limits.maxNamespaceDeclarations} namespace declarations`);
        } else if (c === "=") {
          if (++attributes > limits.maxAttributes) invalid(`must have at most ${limits.maxAttributes} attributes`);
        } else if (c === ">") break;
      }
      if (j >= xml.length) invalid("is not well-formed XML: unterminated start tag");
      if (xml[j - 1] !== "/" && ++depth > limits.maxDepth) invalid(`must nest elements at most ${limits.maxDepth} levels deep`);
      // Stryker disable next-line ArithmeticOperator: xml[j] is ">" and xml[j - 1] is "<" only in text the parser refuses anyway, so the next "<" is the same
      i = j + 1;
    }
    i = xml.indexOf("<", i);
  }
}

/**
 * Parses SAML 2.0 metadata with a namespace-aware XML parser and returns the entityID of its
 * EntityDescriptor. A DOCTYPE is refused outright: metadata never needs one, and refusing it rules
 * out entity-expansion and external-entity attacks whatever the parser would do with it. The size,
 * depth, element and attribute bounds are checked before parsing, so the parse stays short. Error
 * descriptions are fixed texts: the parser's own messages quote the document (xmldom lists every
 * unclosed tag), and a caller's document is never echoed back.
 */
export function parseSamlEntityId(xml: string): string {
  checkBounds(xml);
  let root: Element | null = null;
  let wellFormed = true;
  try {
    const parser = new DOMParser({
      // Every level, warnings too: xmldom only warns about some constructs XML forbids (an unquoted attribute value,
      // an attribute without a value) and would accept the document; metadata must be well-formed XML.
      onError: () => {
        // Stryker disable next-line StringLiteral: the catch below discards the error, its message is never read
        throw new Error("not well-formed");
      },
    });
    root = parser.parseFromString(xml, "text/xml").documentElement as Element | null;
  } catch {
    wellFormed = false;
  }
  if (!wellFormed) invalid("is not well-formed XML");
  if (!root || root.namespaceURI !== METADATA_NS || root.localName !== "EntityDescriptor") {
    invalid(`must have an EntityDescriptor root element in namespace ${METADATA_NS}`);
  }
  const entityId = root.getAttribute("entityID")?.trim();
  if (!entityId) invalid("EntityDescriptor must carry an entityID");
  if (entityId.length > 1024) invalid("entityID must be at most 1024 characters");
  return entityId;
}
