import { FRAMEWORKS, serve } from "@svc/test-utils/conformance";
import * as soap from "soap";
import { afterAll, describe, expect, it } from "vitest";
import { BINARY, downloadContent, sha256, UPLOAD_PATH, uploadMounts, uploads, XOP_NS } from "./mtom.js";
import { runZeep, stopZeep, zeepAvailable } from "./zeep.js";

/**
 * SOAP MTOM with clients this package did not write, on every framework: node-soap sends a SOAP
 * 1.1 package (its `forceMTOM` and `attachments`) and reads the package answered; zeep reads an
 * answer's attachment back into the value.
 */
const hasZeep = zeepAvailable("mtom-interop.test.ts");
afterAll(() => stopZeep());

interface SoapAttachments {
  parts: { headers: Record<string, string>; body: Buffer }[];
}

for (const framework of FRAMEWORKS) {
  describe(`MTOM with node-soap on ${framework}`, () => {
    it("an upload sent as a package (SOAP 1.1) → the handler gets the attachment's octets", async () => {
      const server = await serve(framework, uploadMounts());
      try {
        const client = await soap.createClientAsync(`${server.url}${UPLOAD_PATH}?wsdl`);
        const before = uploads.length;
        const [result] = await client.uploadAsync(
          {
            name: "report.pdf",
            content: { $xml: `<xop:Include xmlns:xop="${XOP_NS}" href="cid:doc@node-soap"/>` },
          },
          {
            forceMTOM: true,
            attachments: [
              {
                mimetype: "application/pdf",
                contentId: "doc@node-soap",
                name: "report.pdf",
                body: Buffer.from(BINARY),
              },
            ],
          },
        );
        expect(client.lastRequestHeaders?.["Content-Type"]).toMatch(
          /^multipart\/related; type="application\/xop\+xml"/,
        );
        expect(Buffer.from(uploads[before]?.content ?? [])).toEqual(Buffer.from(BINARY));
        expect(result.sha256).toBe(sha256(BINARY));
      } finally {
        await server.close();
      }
    }, 30_000);

    it("a download asked in a package → a package whose part node-soap reads", async () => {
      const server = await serve(framework, uploadMounts());
      try {
        const client = await soap.createClientAsync(`${server.url}${UPLOAD_PATH}?wsdl`, {
          parseResponseAttachments: true,
        });
        const [result, , , , attachments] = (await client.downloadAsync(
          { name: "scan.tiff", size: 5000 },
          { forceMTOM: true },
        )) as [{ name: string }, unknown, unknown, unknown, SoapAttachments];
        expect(result.name).toBe("scan.tiff");
        expect(attachments.parts).toHaveLength(1);
        expect(attachments.parts[0]?.body).toEqual(Buffer.from(downloadContent(5000)));
        expect(attachments.parts[0]?.headers["content-transfer-encoding"]).toBe("binary");
      } finally {
        await server.close();
      }
    }, 30_000);
  });

  describe.skipIf(!hasZeep)(`MTOM with zeep on ${framework}`, () => {
    it('respond: "always" → zeep puts the attachment back as the value\'s bytes', async () => {
      const server = await serve(framework, uploadMounts({ mtom: { respond: "always" } }));
      try {
        const out = await runZeep(
          `${server.url}${UPLOAD_PATH}`,
          `
import hashlib
client = zeep.Client(url)
r = client.service.download(name="scan.tiff", size=6000)
return {"name": r["name"], "size": len(r["content"]), "sha256": hashlib.sha256(r["content"]).hexdigest()}
`,
        );
        const content = downloadContent(6000);
        expect(out).toEqual({ name: "scan.tiff", size: 6000, sha256: sha256(content) });
      } finally {
        await server.close();
      }
    }, 60_000);
  });
}
