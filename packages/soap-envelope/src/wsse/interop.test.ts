import { execFileSync } from "node:child_process";
import { join } from "node:path";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "../../test/helpers.js";
import { SERVED_ON } from "../../test/mounts.js";
import { CA, EC, PARTNER, RSA_SHA256, STRANGER, startSecuredService } from "../../test/wsse.js";
import { PYTHON, runZeep, stopZeep, zeepAvailable } from "../../test/zeep.js";

// Real signers against a listening server with `wsSecurity.signature`: node-soap's
// WSSecurityCert (xml-crypto) and zeep's BinarySignature (python-xmlsec, libxmlsec1).

interface SoapClientError {
  response?: { status: number };
  root?: {
    Envelope?: {
      Body?: { Fault?: { Code?: { Subcode?: { Value?: unknown } }; Reason?: { Text?: unknown } } };
    };
  };
}

/** python-xmlsec beside zeep: skipped, saying so, where it is missing (CI installs it). */
function xmlsecAvailable(): boolean {
  if (!zeepAvailable("wsse/interop.test.ts")) return false;
  try {
    execFileSync(PYTHON, ["-c", "import xmlsec"], { stdio: "ignore" });
    return true;
  } catch {
    const why = `python3-xmlsec is not installed (${PYTHON} -c 'import xmlsec')`;
    if (process.env.CI) throw new Error(`${why}: CI installs it for wsse/interop.test.ts`);
    console.warn(`wsse/interop.test.ts: ${why}: its zeep signature tests are skipped`);
    return false;
  }
}

const WSSE = join(FIXTURES, "wsse");
/** zeep's BinarySignature after a Timestamp; responses are not signed, so not verified. */
const zeepSigned = (key: string, cert: string, method: string) => `
import xmlsec
from datetime import datetime, timedelta, timezone
from zeep.wsse import utils
from zeep.wsse.signature import BinarySignature
class StampedSignature(BinarySignature):
    def apply(self, envelope, headers):
        now = datetime.now(timezone.utc)
        utils.get_security_header(envelope).append(utils.WSU.Timestamp(
            utils.WSU.Created(now.strftime("%Y-%m-%dT%H:%M:%SZ")),
            utils.WSU.Expires((now + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ"))))
        return super().apply(envelope, headers)
    def verify(self, envelope):
        return envelope
signer = StampedSignature("${join(WSSE, key)}", "${join(WSSE, cert)}",
    signature_method=xmlsec.Transform.${method}, digest_method=xmlsec.Transform.SHA256)
client = zeep.Client(url, wsse=signer)
try:
    result = client.service.getCustomer(customerId=42)
    return {"name": result.name if hasattr(result, "name") else result.customer.name}
except zeep.exceptions.Fault as f:
    return {"fault": f.message, "code": str(f.code), "subcodes": [str(s) for s in (f.subcodes or [])]}
`;

const hasXmlsec = xmlsecAvailable();
afterAll(() => stopZeep());

describe.each(SERVED_ON)("signed requests, %s", (framework) => {
  let svc: Awaited<ReturnType<typeof startSecuredService>>;
  beforeAll(async () => {
    svc = await startSecuredService({ signature: { trustedCertificates: [CA, EC.cert] } }, {}, framework);
  });
  afterAll(() => svc.close());

  const client = async (signer: { key: string; cert: string }, options: Record<string, unknown> = {}) => {
    const c = await soap.createClientAsync(`${svc.endpoint}?wsdl`, { forceSoap12Headers: true });
    c.setSecurity(new soap.WSSecurityCert(signer.key, signer.cert, "", options));
    return c;
  };

  describe("node-soap WSSecurityCert signing requests (SOAP 1.2)", () => {
    it("RSA-SHA256, wsu:Id → the call answers; the handler sees the partner's certificate", async () => {
      const c = await client(PARTNER, {
        signatureAlgorithm: RSA_SHA256,
        signerOptions: { idMode: "wssecurity" },
      });
      const [result] = await c.getCustomerAsync({ customerId: "42" });
      expect(result.customer.name).toBe("Ada Lovelace");
      expect(c.lastRequest).toContain("<wsse:BinarySecurityToken");
      expect(svc.seen.at(-1)?.signature?.certificate.subject).toBe("CN=partner.example");
      expect(svc.seen.at(-1)?.signature?.timestamp).toBe(true);
    });

    it("its defaults (an unqualified Id on env:Body) → a Sender fault naming the attribute", async () => {
      const c = await client(PARTNER);
      const err = (await c
        .getCustomerAsync({ customerId: "42" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(400);
      expect(JSON.stringify(err.root?.Envelope?.Body?.Fault?.Reason?.Text)).toContain(
        'Unqualified attribute \\"Id\\" on env:Body',
      );
    });

    it("a certificate no trusted CA issued → wsse:FailedAuthentication reaches the client", async () => {
      const c = await client(STRANGER, {
        signatureAlgorithm: RSA_SHA256,
        signerOptions: { idMode: "wssecurity" },
      });
      const err = (await c
        .getCustomerAsync({ customerId: "42" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(400);
      // node-soap names the subcode's namespace with a prefix of its own (s0:FailedAuthentication).
      expect(String(err.root?.Envelope?.Body?.Fault?.Code?.Subcode?.Value)).toMatch(
        /^\w+:FailedAuthentication$/,
      );
      expect(JSON.stringify(err.root)).toContain(
        "The security token could not be authenticated or authorized",
      );
    });
  });

  describe.skipIf(!hasXmlsec)("zeep BinarySignature (python-xmlsec) signing requests (SOAP 1.2)", () => {
    it("RSA-SHA256 with the partner's certificate → the call answers", async () => {
      const out = await runZeep(svc.endpoint, zeepSigned("partner.key", "partner.pem", "RSA_SHA256"));
      expect(out).toEqual({ name: "Ada Lovelace" });
      expect(svc.seen.at(-1)?.signature?.certificate.subject).toBe("CN=partner.example");
      expect(svc.seen.at(-1)?.signature?.body).toBe(true);
      expect(svc.seen.at(-1)?.signature?.timestamp).toBe(true);
    });

    it("ECDSA-SHA256 with a certificate trusted as itself → the call answers", async () => {
      const out = await runZeep(svc.endpoint, zeepSigned("ec.key", "ec.pem", "ECDSA_SHA256"));
      expect(out).toEqual({ name: "Ada Lovelace" });
      expect(svc.seen.at(-1)?.signature?.certificate.subject).toBe("CN=ec-partner.example");
    });

    it("a stranger's certificate → zeep gets the wsse:FailedAuthentication fault", async () => {
      const out = await runZeep(svc.endpoint, zeepSigned("stranger.key", "stranger.pem", "RSA_SHA256"));
      expect(String(out.fault)).toContain("The security token could not be authenticated or authorized");
    });
  });
});
