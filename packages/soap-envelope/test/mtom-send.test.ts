import { createHash } from "node:crypto";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import type { SoapDiagnostic, SoapEndpointOptions } from "@svc/soap-envelope";
import { FRAMEWORKS, serve } from "@svc/test-utils/conformance";
import { afterAll, describe, expect, it } from "vitest";
import {
  downloadContent,
  mtomType,
  multipart,
  readPackage,
  rootPart,
  THUMBNAIL,
  UPLOAD_PATH,
  UPLOAD_TNS,
  uploadMounts,
  XOP_NS,
} from "./mtom.js";

/**
 * SOAP MTOM answers through real servers on every framework: an `xs:base64Binary` value of at
 * least `mtom.threshold` octets goes in a part of its own, its element holding an `xop:Include`
 * (XOP 1.0 §3.1); the `respond` policy decides which requests get a package.
 */
const B = "MIME-boundary-send";
const ENV12 = "http://www.w3.org/2003/05/soap-envelope";
const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";

const downloadEnvelope = (version: "1.1" | "1.2", size: number) =>
  `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${version === "1.2" ? ENV12 : ENV11}"><env:Body><u:DownloadRequest xmlns:u="${UPLOAD_TNS}"><u:name>scan.tiff</u:name><u:size>${size}</u:size></u:DownloadRequest></env:Body></env:Envelope>`;

interface Row {
  name: string;
  options?: Partial<SoapEndpointOptions>;
  version: "1.1" | "1.2";
  /** The request as an XOP package (its root part only), else a plain envelope. */
  xop: boolean;
  size: number;
  /** The answer's attachments in order (`content`, then `thumbnail` with threshold 0); none: a plain envelope. */
  attachments: readonly Uint8Array[];
}

const rows: Row[] = [
  {
    name: "SOAP 1.2 package asking 4096 octets → a package: content attached, thumbnail and digest inline",
    version: "1.2",
    xop: true,
    size: 4096,
    attachments: [downloadContent(4096)],
  },
  {
    name: "SOAP 1.1 package → a package whose root is text/xml",
    version: "1.1",
    xop: true,
    size: 4096,
    attachments: [downloadContent(4096)],
  },
  {
    name: "a plain SOAP 1.2 envelope (respond: as-requested) → a plain envelope, content in base64",
    version: "1.2",
    xop: false,
    size: 4096,
    attachments: [],
  },
  {
    name: 'respond: "always", a plain request → a package',
    options: { mtom: { respond: "always" } },
    version: "1.2",
    xop: false,
    size: 2048,
    attachments: [downloadContent(2048)],
  },
  {
    name: 'respond: "never", a package → a plain envelope',
    options: { mtom: { respond: "never" } },
    version: "1.2",
    xop: true,
    size: 4096,
    attachments: [],
  },
  {
    name: "every value under the threshold (1023 octets) → a plain envelope",
    options: { mtom: { respond: "always" } },
    version: "1.1",
    xop: false,
    size: 1023,
    attachments: [],
  },
  {
    name: "threshold: 0 → the thumbnail attached as well",
    options: { mtom: { respond: "always", threshold: 0 } },
    version: "1.2",
    xop: false,
    size: 10,
    attachments: [downloadContent(10), THUMBNAIL],
  },
];

const events: SoapDiagnostic[] = [];
const listener = (m: unknown) => {
  events.push(m as SoapDiagnostic);
};
subscribeDiagnostics("svc:soap", listener);
afterAll(() => {
  unsubscribeDiagnostics("svc:soap", listener);
});

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

function request(row: Pick<Row, "version" | "xop" | "size">): {
  headers: Record<string, string>;
  body: Buffer;
} {
  const xml = downloadEnvelope(row.version, row.size);
  const headers: Record<string, string> = {};
  if (row.version === "1.1") headers.soapaction = '"urn:download"';
  if (row.xop) {
    headers["content-type"] = mtomType(row.version, B, undefined, "urn:download");
    return { headers, body: multipart(B, [rootPart(row.version, xml)]) };
  }
  headers["content-type"] =
    row.version === "1.2" ? "application/soap+xml; charset=utf-8" : "text/xml; charset=utf-8";
  return { headers, body: Buffer.from(xml) };
}

for (const framework of FRAMEWORKS) {
  describe(`MTOM answers on ${framework}`, () => {
    for (const row of rows) {
      it(row.name, async () => {
        const server = await serve(framework, uploadMounts(row.options));
        try {
          const { headers, body } = request(row);
          const res = await fetch(`${server.url}${UPLOAD_PATH}`, { method: "POST", headers, body });
          const bytes = Buffer.from(await res.arrayBuffer());
          const type = res.headers.get("content-type") ?? "";
          expect(res.status, bytes.toString("latin1")).toBe(200);
          expect(res.headers.get("content-length")).toBe(String(bytes.byteLength));
          expect(res.headers.get("cache-control")).toBe("no-store");
          const soapType = row.version === "1.2" ? "application/soap+xml" : "text/xml";
          const content = downloadContent(row.size);
          const digest = base64(createHash("sha256").update(content).digest());
          if (row.attachments.length === 0) {
            expect(type).toBe(`${soapType}; charset=utf-8`);
            const text = bytes.toString("utf8");
            expect(text).toContain(`<content>${base64(content)}</content>`);
            expect(text).toContain(`digest="${digest}"`);
            expect(text).not.toContain("Include");
            return;
          }
          // SOAP MTOM §3 and XOP 1.0 §4.1: multipart/related, the root part application/xop+xml.
          expect(type).toMatch(/^multipart\/related; type="application\/xop\+xml"; start="<[^>]+>"; /);
          expect(type).toContain(`start-info="${soapType}"`);
          const pkg = readPackage(bytes, type);
          expect(pkg.root.headers["content-type"]).toBe(
            `application/xop+xml; charset=utf-8; type="${soapType}"`,
          );
          expect(`<${pkg.root.headers["content-id"]?.slice(1, -1)}>`).toBe(pkg.start);
          const root = pkg.root.body.toString("utf8");
          expect(root).toContain(`<content><xop:Include xmlns:xop="${XOP_NS}" href="cid:`);
          // The attribute stays base64 whatever its size (XOP optimizes element content only).
          expect(root).toContain(`digest="${digest}"`);
          if (row.attachments.length === 1)
            expect(root).toContain(`<thumbnail>${base64(THUMBNAIL)}</thumbnail>`);
          const hrefs = [...root.matchAll(/href="cid:([^"]+)"/g)].map((m) => m[1]);
          expect(hrefs).toHaveLength(row.attachments.length);
          expect(pkg.parts).toHaveLength(row.attachments.length);
          row.attachments.forEach((expected, i) => {
            const part = pkg.parts.find((p) => p.headers["content-id"] === `<${hrefs[i]}>`);
            expect(part?.headers["content-transfer-encoding"]).toBe("binary");
            expect(part?.body).toEqual(Buffer.from(expected));
          });
        } finally {
          await server.close();
        }
      });
    }

    it("svc:soap names the answer's attachments and octets", async () => {
      const server = await serve(framework, uploadMounts());
      try {
        events.length = 0;
        const { headers, body } = request({ version: "1.2", xop: true, size: 3000 });
        const res = await fetch(`${server.url}${UPLOAD_PATH}`, { method: "POST", headers, body });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        expect(events).toMatchObject([
          {
            decision: "operation",
            operation: "download",
            attachments: { count: 0, bytes: 0 },
            responseAttachments: { count: 1, bytes: 3000 },
          },
        ]);
      } finally {
        await server.close();
      }
    });
  });
}
