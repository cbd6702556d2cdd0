import { conformance, type Row, type RowResponse } from "@svc/test-utils/conformance";
import { expect } from "vitest";
import { envelope, getCustomer, readFault, TNS } from "../../test/helpers.js";
import { PATH, soapMounts } from "../../test/mounts.js";
import type { SoapServiceOptions } from "../binding/service.js";
import { SoapAuthenticationError } from "../wsse/credentials.js";
import type { XmlElement } from "../xml/reader.js";
import { WSSE_NS } from "./fault.js";

/**
 * With `authenticate`, a header block this node does not process (neither `authenticateHeaders`
 * nor `understoodHeaders`) is read up to its start tag before credentials are decided: its
 * content is held unparsed, its elements still counted against the limits, and parsed once the
 * hook lets the message in (or when the hook reads it). On every framework: a Body of 1 MiB
 * arrives in pieces (read ahead of saxes), a small message whole (the fast parser).
 */
const FAILED = `{${WSSE_NS}}FailedAuthentication`;
const SOAP12 = "application/soap+xml; charset=utf-8";
const login = `<c:Authentication xmlns:c="${TNS}"><c:Username>ada</c:Username></c:Authentication>`;

async function authenticate(blocks: readonly XmlElement[]): Promise<{ name: string }> {
  const name = blocks.find((b) => b.localName === "Authentication")?.children[0]?.text;
  if (!name) throw new SoapAuthenticationError("credentials are required");
  // A block the hook reads though it does not consume it: its content is parsed as it is read.
  const ticket = blocks.find((b) => b.localName === "Ticket");
  if (ticket !== undefined && ticket.children[0]?.children[0]?.text !== "valid") {
    throw new SoapAuthenticationError("the ticket is not valid");
  }
  return { name };
}

/** getCustomer answers with the text of the first grandchild of the header block `Note`. */
const handlers = {
  getCustomer: async (_payload: unknown, context: { headers: readonly XmlElement[] }) => {
    const note = context.headers.find((b) => b.localName === "Note");
    const name = note?.children[0]?.children[0]?.text ?? "no note";
    return { customer: { id: 42n, name, email: "ada@example.com" } };
  },
  createCustomer: async () => ({ customerId: 1n }),
  logEvent: async () => {},
  sendNotification: async () => {},
} as unknown as SoapServiceOptions["handlers"];

/** A header block `h:b` holding 60-deep nesting, repeated to about `bytes`, then `tail` at the bottom of one more. */
function deepBlock(bytes: number, tail = ""): string {
  const unit = `${"<h:a>".repeat(60)}${"</h:a>".repeat(60)}`;
  const last = `${"<h:a>".repeat(60)}${tail}${"</h:a>".repeat(60)}`;
  return `<h:b xmlns:h="urn:x">${unit.repeat(Math.floor(bytes / unit.length))}${last}</h:b>`;
}

const post = (body: string, contentType = SOAP12) => ({
  method: "POST",
  path: PATH,
  headers: { "Content-Type": contentType },
  body,
});

const credentialsRefused = (r: RowResponse) => expect(readFault(r.text).subcodes).toEqual([FAILED]);
const notWellFormed = (r: RowResponse) => {
  const fault = readFault(r.text);
  expect(fault.subcodes).toEqual([]);
  expect(fault.reason).toMatch(/^The message is not well-formed XML/);
};

const MiB = 1_048_576;
const malformed = deepBlock(MiB - 2048, "<h:x></h:y>");
const attributes = Array.from({ length: 65 }, (_, i) => ` a${i}="${i}"`).join("");

const rows: Row[] = [
  {
    name: "no credentials, a block nobody processes of 60-deep nesting to 1 MiB, not well-formed at its end → 400 wsse:FailedAuthentication",
    request: post(envelope(getCustomer("42"), malformed)),
    status: 400,
    body: credentialsRefused,
  },
  {
    name: "no credentials, a block nobody processes with an element of 65 attributes 60 levels down → 400 wsse:FailedAuthentication",
    request: post(envelope(getCustomer("42"), deepBlock(0, `<h:x${attributes}/>`))),
    status: 400,
    body: credentialsRefused,
  },
  {
    name: "no credentials, SOAP 1.1, a block nobody processes not well-formed inside → 500 wsse:FailedAuthentication",
    request: post(
      envelope(getCustomer("42"), deepBlock(0, "<h:x></h:y>"), "http://schemas.xmlsoap.org/soap/envelope/"),
      "text/xml; charset=utf-8",
    ),
    status: 500,
    body: (r) => expect(r.text).toContain("FailedAuthentication"),
  },
  {
    name: "credentials, the 1 MiB block not well-formed at its end → 400 not well-formed (parsed once they pass)",
    request: post(envelope(getCustomer("42"), `${login}${malformed}`)),
    status: 400,
    body: notWellFormed,
  },
  {
    name: "credentials, a block nobody processes with an element of 65 attributes → 400 naming the attribute limit",
    request: post(envelope(getCustomer("42"), `${login}${deepBlock(0, `<h:x${attributes}/>`)}`)),
    status: 400,
    body: (r) => expect(readFault(r.text).reason).toBe("An element has more than 64 attributes"),
  },
  {
    name: "no credentials, a block nobody processes nesting 70 deep → 400 naming limits.maxDepth (still counted)",
    request: post(
      envelope(getCustomer("42"), `<h:b xmlns:h="urn:x">${"<h:a>".repeat(70)}${"</h:a>".repeat(70)}</h:b>`),
    ),
    status: 400,
    body: (r) => expect(readFault(r.text).reason).toBe("The message nests elements deeper than 64"),
  },
  {
    name: "credentials and a Note block of 90,000 elements nobody processes → 200, the handler reads it from context.headers",
    request: post(
      envelope(
        getCustomer("42"),
        `${login}<n:Note xmlns:n="urn:n"><n:p><n:q>from the note</n:q></n:p>${"<n:r/>".repeat(90_000)}</n:Note>`,
      ),
    ),
    status: 200,
    body: (r) => expect(r.text).toContain("from the note"),
  },
  {
    name: "credentials and a Ticket block the hook reads without consuming it, valid → 200",
    request: post(
      envelope(getCustomer("42"), `${login}<t:Ticket xmlns:t="urn:t"><t:v><t:w>valid</t:w></t:v></t:Ticket>`),
    ),
    status: 200,
  },
  {
    name: "credentials and a Ticket block the hook reads without consuming it, invalid → 400 wsse:FailedAuthentication",
    request: post(
      envelope(getCustomer("42"), `${login}<t:Ticket xmlns:t="urn:t"><t:v><t:w>stale</t:w></t:v></t:Ticket>`),
    ),
    status: 400,
    body: credentialsRefused,
  },
  {
    name: "credentials and a Ticket block the hook reads, not well-formed inside → 400 not well-formed",
    request: post(envelope(getCustomer("42"), `${login}<t:Ticket xmlns:t="urn:t"><t:v></t:w></t:Ticket>`)),
    status: 400,
    body: notWellFormed,
  },
];

conformance(
  "header blocks nobody processes, before credentials",
  soapMounts({ authenticate, handlers, limits: {} }),
  rows,
);
