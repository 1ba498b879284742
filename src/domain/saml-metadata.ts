import { DOMParser, type Element } from "@xmldom/xmldom";
import { invalidArgument } from "./errors.js";

const METADATA_NS = "urn:oasis:names:tc:SAML:2.0:metadata";
const REASON = "application.saml_metadata_invalid";

function invalid(description: string): never {
  throw invalidArgument(REASON, `metadata_xml ${description}`, [{ field: "metadata_xml", description, rule: REASON }]);
}

/**
 * Parses SAML 2.0 metadata with a namespace-aware XML parser and returns the entityID of its
 * EntityDescriptor. A DOCTYPE is refused outright: metadata never needs one, and refusing it rules
 * out entity-expansion and external-entity attacks whatever the parser would do with it.
 */
export function parseSamlEntityId(xml: string): string {
  if (/<!DOCTYPE/i.test(xml)) invalid("must not contain a DOCTYPE");
  let root: Element | null;
  try {
    const parser = new DOMParser({
      onError: (level: string, message: string) => {
        if (level !== "warning") throw new Error(message);
      },
    });
    root = parser.parseFromString(xml, "text/xml").documentElement as Element | null;
  } catch (error) {
    invalid(`is not well-formed XML: ${(error as Error).message.split("\n")[0]}`);
  }
  if (!root || root.namespaceURI !== METADATA_NS || root.localName !== "EntityDescriptor") {
    invalid(`must have an EntityDescriptor root element in namespace ${METADATA_NS}`);
  }
  const entityId = root.getAttribute("entityID")?.trim();
  if (!entityId) invalid("EntityDescriptor must carry an entityID");
  if (entityId.length > 1024) invalid("entityID must be at most 1024 characters");
  return entityId;
}
