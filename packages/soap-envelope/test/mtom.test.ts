import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import type { SoapDiagnostic } from "@svc/soap-envelope";
import { FRAMEWORKS, serve } from "@svc/test-utils/conformance";
import { afterAll, describe, expect, it } from "vitest";
import {
  BINARY,
  mtomType,
  multipart,
  type Part,
  rootPart,
  sha256,
  UPLOAD_PATH,
  uploadEnvelope,
  uploadEnvelopeOf,
  uploadMounts,
  uploads,
  XOP_NS,
} from "./mtom.js";

/**
 * SOAP MTOM requests (a multipart/related XOP package) through real servers on every framework:
 * the handler receives each attachment's octets as its xs:base64Binary value; every package the
 * bounds or XOP refuse is a Sender (SOAP 1.1: Client) fault, never a 500.
 */
const B = "MIME-boundary-7f3a";
const bin = (id: string, body: Uint8Array | string = BINARY, extra: Record<string, string> = {}): Part => ({
  headers: {
    "Content-Type": "application/octet-stream",
    "Content-Transfer-Encoding": "binary",
    "Content-ID": `<${id}>`,
    ...extra,
  },
  body,
});

interface Row {
  name: string;
  version: "1.1" | "1.2";
  body: Buffer;
  type?: string;
  status: number;
  /** For a 200: the bytes the handler's `content` holds; for a fault: text its reason holds. */
  expect: Uint8Array | string;
  /** For a 200: the `name` the handler receives, when the row says. */
  uploadName?: string;
}

/** An `xop:Include` of `cid` as written in the rows below, its prefix declared or not. */
const include = (cid: string, declare = ` xmlns:xop="${XOP_NS}"`) =>
  `<xop:Include${declare} href="cid:${cid}"/>`;

const rows: Row[] = [
  {
    name: "SOAP 1.2, one binary part → the handler gets its octets",
    version: "1.2",
    body: multipart(B, [rootPart("1.2", uploadEnvelope("1.2", "doc@example")), bin("doc@example")]),
    status: 200,
    expect: BINARY,
  },
  {
    name: "SOAP 1.1 (start-info text/xml) → the handler gets its octets",
    version: "1.1",
    body: multipart(B, [rootPart("1.1", uploadEnvelope("1.1", "doc@example")), bin("doc@example")]),
    status: 200,
    expect: BINARY,
  },
  {
    name: "a base64 part and a percent-encoded cid → decoded",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelope("1.2", "doc%40example")),
      bin("doc@example", Buffer.from(BINARY).toString("base64").replace(/.{76}/g, "$&\r\n"), {
        "Content-Transfer-Encoding": "base64",
      }),
    ]),
    status: 200,
    expect: BINARY,
  },
  {
    name: "a part no xop:Include names → read and dropped",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelope("1.2", "doc@example")),
      bin("doc@example", "abc"),
      bin("extra@example"),
    ]),
    status: 200,
    expect: new TextEncoder().encode("abc"),
  },
  {
    name: "an xop:Include naming no part → Sender fault",
    version: "1.2",
    body: multipart(B, [rootPart("1.2", uploadEnvelope("1.2", "gone@example")), bin("doc@example")]),
    status: 400,
    expect: "An xop:Include names <gone@example>, which is not an attachment of the package",
  },
  {
    name: "two parts with one Content-ID → Sender fault",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelope("1.2", "doc@example")),
      bin("doc@example"),
      bin("doc@example"),
    ]),
    status: 400,
    expect: "Two parts have the Content-ID <doc@example>",
  },
  {
    name: "more parts than mtom.maxParts (4) → Sender fault",
    version: "1.2",
    body: multipart(B, [rootPart("1.2", uploadEnvelope("1.2", "a")), bin("a"), bin("b"), bin("c"), bin("d")]),
    status: 400,
    expect: "The package has more than 4 parts (mtom.maxParts)",
  },
  {
    name: "a part over mtom.maxPartBytes (2048) → Sender fault",
    version: "1.2",
    body: multipart(B, [rootPart("1.2", uploadEnvelope("1.2", "a")), bin("a", new Uint8Array(3000))]),
    status: 400,
    expect: "A part is larger than 2048 bytes (mtom.maxPartBytes)",
  },
  {
    name: "a header section over mtom.maxHeaderBytes (512) → Sender fault",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelope("1.2", "a")),
      bin("a", "x", { "X-Pad": "p".repeat(600) }),
    ]),
    status: 400,
    expect: "A part's header section is not ended within 512 bytes (mtom.maxHeaderBytes)",
  },
  {
    name: "a nested multipart part → Sender fault",
    version: "1.1",
    body: multipart(B, [
      rootPart("1.1", uploadEnvelope("1.1", "a")),
      bin("a", "x", { "Content-Type": 'multipart/mixed; boundary="inner"' }),
    ]),
    status: 500,
    expect: "A part of type multipart/mixed is not accepted: parts are not nested",
  },
  {
    name: "quoted-printable → Sender fault",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelope("1.2", "a")),
      bin("a", "x", { "Content-Transfer-Encoding": "quoted-printable" }),
    ]),
    status: 400,
    expect: 'Content-Transfer-Encoding "quoted-printable" is not accepted',
  },
  {
    name: "no close delimiter → Sender fault",
    version: "1.2",
    body: Buffer.from(`--${B}\r\nContent-ID: <root@example>\r\n\r\n<x/>`),
    status: 400,
    expect: "The multipart body ends without its close delimiter",
  },
  {
    name: "a root part that is not application/xop+xml → Sender fault",
    version: "1.2",
    body: multipart(B, [
      {
        ...rootPart("1.2", uploadEnvelope("1.2", "a")),
        headers: { "Content-ID": "<root@example>", "Content-Type": "text/plain" },
      },
      bin("a"),
    ]),
    status: 400,
    expect: "The root part's Content-Type must be application/xop+xml (XOP 1.0 §4.1)",
  },
  {
    name: "an xop:Include look-alike in a CDATA section → kept as the text it is, the real one resolved",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelopeOf(`<![CDATA[${include("doc@example")}]]>`, include("doc@example"))),
      bin("doc@example"),
    ]),
    status: 200,
    expect: BINARY,
    uploadName: include("doc@example"),
  },
  {
    name: "a comment naming the XOP namespace, an Include whose prefix is bound to another → not resolved, a Sender fault",
    version: "1.2",
    body: multipart(B, [
      rootPart(
        "1.2",
        uploadEnvelopeOf(
          `report.pdf<!-- xmlns:xop="${XOP_NS}" -->`,
          include("doc@example", ' xmlns:xop="urn:example:not-xop"'),
        ),
      ),
      bin("doc@example"),
    ]),
    status: 400,
    expect: "UploadRequest/content: must not contain elements",
  },
  {
    name: "an Include of another namespace, its prefix bound to XOP on another element → not resolved, a Sender fault",
    version: "1.2",
    body: multipart(B, [
      rootPart(
        "1.2",
        uploadEnvelopeOf(
          "report.pdf",
          `<x:Include xmlns:x="urn:example:not-xop" href="cid:doc@example"/>`,
        ).replace("<u:name>", `<u:name xmlns:x="${XOP_NS}">`),
      ),
      bin("doc@example"),
    ]),
    status: 400,
    expect: "UploadRequest/content: must not contain elements",
  },
  {
    name: "an xop:Include whose prefix the Envelope binds → resolved",
    version: "1.2",
    body: multipart(B, [
      rootPart("1.2", uploadEnvelopeOf("report.pdf", include("doc@example", ""), true)),
      bin("doc@example"),
    ]),
    status: 200,
    expect: BINARY,
    uploadName: "report.pdf",
  },
  {
    name: "an unprefixed Include in the XOP namespace its parent makes the default → resolved",
    version: "1.2",
    body: multipart(B, [
      rootPart(
        "1.2",
        uploadEnvelopeOf("report.pdf", `<Include href="cid:doc@example"/>`).replace(
          "<u:content>",
          `<u:content xmlns="${XOP_NS}">`,
        ),
      ),
      bin("doc@example"),
    ]),
    status: 200,
    expect: BINARY,
    uploadName: "report.pdf",
  },
  {
    name: "a body over limits.maxBytes (64 KiB) → 413",
    version: "1.2",
    body: multipart(B, [rootPart("1.2", uploadEnvelope("1.2", "a")), bin("a", new Uint8Array(70 * 1024))]),
    status: 413,
    expect: "larger than 65536 bytes",
  },
];

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" };
const opts = { mtom: { maxParts: 4, maxPartBytes: 2048, maxHeaderBytes: 512 } };
const events: SoapDiagnostic[] = [];
const listener = (m: unknown) => {
  events.push(m as SoapDiagnostic);
};
subscribeDiagnostics("svc:soap", listener);
afterAll(() => {
  unsubscribeDiagnostics("svc:soap", listener);
});

for (const framework of FRAMEWORKS) {
  describe(`MTOM requests on ${framework}`, () => {
    for (const row of rows) {
      it(row.name, async () => {
        const server = await serve(framework, uploadMounts(opts));
        try {
          const before = uploads.length;
          const headers: Record<string, string> = { "content-type": row.type ?? mtomType(row.version, B) };
          if (row.version === "1.1") headers.soapaction = '"urn:upload"';
          const res = await fetch(`${server.url}${UPLOAD_PATH}`, { method: "POST", headers, body: row.body });
          const text = await res.text();
          expect(res.status, text).toBe(row.status);
          if (row.expect instanceof Uint8Array) {
            expect(uploads.length).toBe(before + 1);
            expect(Buffer.from(uploads[before]?.content ?? [])).toEqual(Buffer.from(row.expect));
            expect(text).toContain(`<sha256>${sha256(row.expect)}</sha256>`);
            if (row.uploadName !== undefined) expect(uploads[before]?.name).toBe(row.uploadName);
          } else {
            expect(uploads.length).toBe(before);
            expect(text).toContain(row.version === "1.2" ? "env:Sender" : "Client");
            const reason = text.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ENTITIES[e] as string);
            expect(reason).toContain(row.expect);
          }
        } finally {
          await server.close();
        }
      });
    }

    it("two attachments → svc:soap names their count and octets", async () => {
      const server = await serve(framework, uploadMounts(opts));
      try {
        events.length = 0;
        const body = multipart(B, [
          rootPart("1.2", uploadEnvelope("1.2", "a", "b")),
          bin("a"),
          bin("b", "tiny"),
        ]);
        const res = await fetch(`${server.url}${UPLOAD_PATH}`, {
          method: "POST",
          headers: { "content-type": mtomType("1.2", B) },
          body,
        });
        expect(res.status).toBe(200);
        expect(Buffer.from(uploads.at(-1)?.preview ?? [])).toEqual(Buffer.from("tiny"));
        expect(events).toMatchObject([
          {
            decision: "operation",
            operation: "upload",
            attachments: { count: 2, bytes: BINARY.byteLength + 4 },
          },
        ]);
      } finally {
        await server.close();
      }
    });

    it("mtom: false → 415, the package unread", async () => {
      const server = await serve(framework, uploadMounts({ mtom: false }));
      try {
        const body = multipart(B, [rootPart("1.2", uploadEnvelope("1.2", "a")), bin("a")]);
        const res = await fetch(`${server.url}${UPLOAD_PATH}`, {
          method: "POST",
          headers: { "content-type": mtomType("1.2", B) },
          body,
        });
        expect(res.status).toBe(415);
      } finally {
        await server.close();
      }
    });
  });
}
