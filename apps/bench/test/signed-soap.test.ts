import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../src/harness.mjs";
import { scenarios } from "../src/scenarios.mjs";

// The signed getCustomer comparison is only fair if both SOAP servers check what they are sent:
// each accepts the bench's signed message and refuses the same message altered, unsigned, or
// signed by a certificate the CA did not issue.

const WSSE_FIXTURES = fileURLToPath(
  new URL("../../../packages/soap-envelope/src/__fixtures__/wsse/", import.meta.url),
);
const pem = (name: string) => readFileSync(join(WSSE_FIXTURES, name), "utf8");
const ENVELOPE =
  '<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" ' +
  'xmlns:c="http://svc.example.com/ws/customer/v1"><soap:Header></soap:Header><soap:Body>' +
  "<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest></soap:Body></soap:Envelope>";

function signedBy(key: string, cert: string): string {
  const signer = new soap.WSSecurityCert(pem(key), pem(cert), "", {
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    signerOptions: { idMode: "wssecurity" },
  });
  return signer.postProcess(ENVELOPE, "soap");
}

interface Prepared {
  path: string;
  headers: Record<string, string>;
  body: string;
}

describe.each(["soap-envelope-signed-node", "node-soap-signed-node"])("%s", (id) => {
  let server: { url: string; stop(): Promise<void> };
  let request: Prepared;
  beforeAll(async () => {
    const scenario = scenarios.find((s: { id: string }) => s.id === id);
    const how = scenario?.server();
    if (scenario === undefined || how === undefined || !("script" in how) || how.script === undefined)
      throw new Error(`${id}: no such scenario, or its server is unavailable`);
    server = await startServer(how);
    request = (await scenario.prepare(server.url, {})) as Prepared;
  }, 60_000);
  afterAll(() => server?.stop());

  const post = async (body: string) => {
    const res = await fetch(`${server.url}${request.path}`, {
      method: "POST",
      headers: request.headers,
      body,
    });
    return { status: res.status, text: await res.text() };
  };

  it("the bench's signed message → 200 GetCustomerResponse", async () => {
    const res = await post(request.body);
    expect(res.status).toBe(200);
    expect(res.text).toContain("GetCustomerResponse");
  });

  it.each([
    [
      "its customerId changed after signing",
      (body: string) => body.replace("customerId>1<", "customerId>2<"),
    ],
    ["no signature (the unsigned message)", () => ENVELOPE],
    ["signed by a stranger's certificate", () => signedBy("stranger.key", "stranger.pem")],
  ])("%s → 400 Sender fault, no customer", async (_name, change) => {
    const res = await post(change(request.body));
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/env:Sender/);
    expect(res.text).not.toContain("GetCustomerResponse");
  });
});
