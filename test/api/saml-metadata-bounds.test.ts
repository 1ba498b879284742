import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { SAML_METADATA_LIMITS } from "../../src/domain/saml-metadata.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { errorShape } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * CreateSamlApplication does work a caller controls (parsing up to a megabyte of XML), so the
 * permission check comes first, the parse is bounded, and error messages never quote the document.
 */
const t = useTestServer();
let orgId: string;
let projectId: string;
let stranger: Actor;
let viewer: Actor;

const MD = 'xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"';
const wrap = (inner: string) => `<md:EntityDescriptor ${MD} entityID="https://sp.example.com/bounds">${inner}</md:EntityDescriptor>`;
/** A megabyte of opening tags: over a second of parsing before, and an error message quoting every tag. */
const deepMegabyte = "<UnclosedSecretTag>".repeat(Math.floor(999_000 / 19));
const hostile: Record<string, string> = {
  "a megabyte of nested elements": deepMegabyte,
  "an element bomb": wrap("<b/>".repeat(SAML_METADATA_LIMITS.maxElements + 1)),
  "an attribute bomb": wrap(`<b ${Array.from({ length: SAML_METADATA_LIMITS.maxAttributes + 1 }, (_, i) => `a${i}="1"`).join(" ")}/>`),
  "a namespace bomb": wrap(`<b ${Array.from({ length: 100 }, (_, i) => `xmlns:p${i}="urn:p${i}"`).join(" ")}/>`),
  // Declarations glued to the previous attribute's closing quote once escaped the namespace count.
  "a glued namespace bomb": wrap(`<b ${Array.from({ length: 4_990 }, (_, i) => `a${i}="1"xmlns:n${i}="urn:${i}"`).join("")}>${"<md:X/>".repeat(4_990)}</b>`),
  "a reference bomb": wrap("&amp;".repeat(SAML_METADATA_LIMITS.maxReferences + 1)),
  "unclosed tags within the bounds": wrap("<UnclosedSecretTag>".repeat(20)).replace(/<\/md:EntityDescriptor>$/, ""),
};

/** Realistic SP metadata: a signature, keys, name id formats and two endpoints, nested eight deep. */
const realistic =
  `<?xml version="1.0" encoding="UTF-8"?>\n<!-- exported by the SP -->\n` +
  `<md:EntityDescriptor ${MD} xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://sp.example.com/real">` +
  `<ds:Signature><ds:SignedInfo><ds:Reference URI=""><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>` +
  `</ds:Transforms><ds:DigestValue>abc=</ds:DigestValue></ds:Reference></ds:SignedInfo><ds:SignatureValue>def=</ds:SignatureValue></ds:Signature>` +
  `<md:SPSSODescriptor AuthnRequestsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
  `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${"QUJD".repeat(300)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
  `<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>` +
  `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/acs?a=1&amp;b=2" index="0"/>` +
  `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://sp.example.com/acs2" index="1"/>` +
  `<![CDATA[ <not-an-element> ]]></md:SPSSODescriptor></md:EntityDescriptor>`;

beforeAll(async () => {
  const admin = { token: t.server.adminToken };
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", admin).createOrganization({ name: "SAML bounds" }));
  ({ projectId } = await t.clients.client(ProjectService, "connect-json-http1", { ...admin, orgId }).createProject({ name: "SAML bounds" }));
  stranger = await createActor(t.clients, t.server.adminToken, orgId, "saml-stranger");
  viewer = await createActor(t.clients, t.server.adminToken, orgId, "saml-viewer", ["ORG_OWNER_VIEWER"]);
});

const apps = (protocol: Protocol, token: string) => t.clients.client(ApplicationService, protocol, { token, orgId });
const createSaml = (protocol: Protocol, token: string, name: string, xml: string) =>
  apps(protocol, token).createSamlApplication({ projectId, name, metadata: { case: "metadataXml", value: xml } });

async function connectError(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  return expect.fail("the call succeeded but should have failed");
}

describe.each(PROTOCOLS)("CreateSamlApplication's metadata bounds over %s", (protocol) => {
  it("answers a caller without the right permission_denied before parsing: a document the parser refuses changes nothing", async () => {
    for (const actor of [stranger, viewer]) {
      for (const xml of [deepMegabyte, "<root/>", "<md:EntityDescriptor"]) {
        expect(errorShape(await connectError(createSaml(protocol, actor.token, "stranger app", xml)))).toMatchObject({ code: Code.PermissionDenied });
      }
    }
  });

  it.each(Object.entries(hostile))("refuses %s with invalid_argument and a short message that quotes nothing", async (_name, xml) => {
    const before = (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({})).details!.totalResult;
    const error = await connectError(createSaml(protocol, t.server.adminToken, `hostile ${protocol}`, xml));
    expect(errorShape(error)).toMatchObject({ code: Code.InvalidArgument, reason: "application.saml_metadata_invalid", fields: ["metadata_xml"] });
    expect(error.rawMessage.length).toBeLessThanOrEqual(200);
    expect(error.rawMessage).not.toContain("UnclosedSecretTag");
    expect((await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({})).details!.totalResult).toBe(before);
  });

  it("accepts realistic metadata with a signature, keys, comments and CDATA", async () => {
    const { appId } = await createSaml(protocol, t.server.adminToken, `real ${protocol}`, realistic);
    const { app } = await apps(protocol, t.server.adminToken).getApplication({ projectId, appId });
    expect(app?.config).toMatchObject({ case: "saml", value: { entityId: "https://sp.example.com/real", metadataXml: realistic } });
  });
});
