import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Started, sqlite } from "./harness.js";

const TNS = "http://svc.example.com/ws/customer/v1";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
const SOAP_XML = "application/soap+xml; charset=utf-8";
const get1 = `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>1</c:customerId></c:GetCustomerRequest>`;

/** Every bad input of the @svc/soap-envelope issue, through the real /ws/customer endpoint. */
describe("SOAP faults through /ws/customer", () => {
  let s: Started;
  let endpoint: string;
  const post = (body: string, contentType = SOAP_XML, extra: Record<string, string> = {}) =>
    fetch(endpoint, {
      method: "POST",
      headers: { "content-type": contentType, authorization: ADMIN, ...extra },
      body,
    });

  beforeAll(async () => {
    s = await sqlite.start();
    endpoint = `${s.url}/ws/customer`;
  });
  afterAll(() => s.stop());

  it("a good request → 200 application/soap+xml with security headers and the correlation id echoed", async () => {
    const res = await post(
      `<env:Envelope xmlns:env="${SOAP12}"><env:Body>${get1}</env:Body></env:Envelope>`,
      SOAP_XML,
      {
        "x-correlation-id": "soap-trace-1",
        accept: "application/soap+xml",
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
    expect(res.headers.get("x-correlation-id")).toBe("soap-trace-1");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBeTruthy();
  });

  it("SOAP 1.1 envelope (text/xml) → 500 SOAP 1.1 VersionMismatch fault", async () => {
    const res = await post(
      `<s:Envelope xmlns:s="${SOAP11}"><s:Body>${get1}</s:Body></s:Envelope>`,
      "text/xml; charset=utf-8",
    );
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("VersionMismatch");
  });

  it("SOAP 1.1 envelope sent as application/soap+xml → VersionMismatch with env:Upgrade", async () => {
    const res = await post(`<s:Envelope xmlns:s="${SOAP11}"><s:Body>${get1}</s:Body></s:Envelope>`);
    const text = await res.text();
    expect(text).toContain("VersionMismatch");
    expect(res.status).toBeGreaterThanOrEqual(400);
  });

  it('unknown header block with mustUnderstand="true" → 500 MustUnderstand with NotUnderstood', async () => {
    const res = await post(
      `<env:Envelope xmlns:env="${SOAP12}"><env:Header><x:Tx xmlns:x="urn:x" env:mustUnderstand="true">1</x:Tx></env:Header><env:Body>${get1}</env:Body></env:Envelope>`,
    );
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).toContain("env:MustUnderstand");
    expect(text).toContain("NotUnderstood");
  });

  it("missing Body → 400 Sender", async () => {
    const res = await post(`<env:Envelope xmlns:env="${SOAP12}"><env:Header/></env:Envelope>`);
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("env:Sender");
    expect(text).not.toMatch(/TypeError|at \w+ \(/);
  });

  it("DOCTYPE with an external entity → 400 Sender, nothing read", async () => {
    const res = await post(
      `<?xml version="1.0"?><!DOCTYPE env:Envelope [<!ENTITY x SYSTEM "file:///etc/passwd">]><env:Envelope xmlns:env="${SOAP12}"><env:Body>&x;</env:Body></env:Envelope>`,
    );
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("env:Sender");
    expect(text).not.toContain("root:");
  });

  it("Content-Type: application/json → 415 SOAP fault", async () => {
    const res = await post("{}", "application/json");
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
  });

  it("customerId notanumber (invalid xs:long) → 400 Sender, never NaN", async () => {
    const res = await post(
      `<env:Envelope xmlns:env="${SOAP12}"><env:Body><c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>notanumber</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`,
    );
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("env:Sender");
    expect(text).not.toContain("NaN");
  });

  it("customerId 9223372036854775808 (beyond xs:long) → 400 Sender", async () => {
    const res = await post(
      `<env:Envelope xmlns:env="${SOAP12}"><env:Body><c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>9223372036854775808</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`,
    );
    expect(res.status).toBe(400);
  });

  it("unknown body element → 400 Sender", async () => {
    const res = await post(
      `<env:Envelope xmlns:env="${SOAP12}"><env:Body><c:DeleteEverything xmlns:c="${TNS}"/></env:Body></env:Envelope>`,
    );
    expect(res.status).toBe(400);
  });

  it("GET /ws/customer without ?wsdl → 405 with Allow: POST", async () => {
    const res = await fetch(endpoint);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

describe("SOAP with the database gone", () => {
  it("getCustomer → 503 with Retry-After and an env:Receiver fault without internal detail", async () => {
    const s = await sqlite.start();
    try {
      await s.service.db.close();
      const res = await fetch(`${s.url}/ws/customer`, {
        method: "POST",
        headers: { "content-type": SOAP_XML, authorization: ADMIN },
        body: `<env:Envelope xmlns:env="${SOAP12}"><env:Body>${get1}</env:Body></env:Envelope>`,
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      const text = await res.text();
      expect(text).toContain("env:Receiver");
      expect(text).not.toMatch(/sqlite|connection is not open/i);
    } finally {
      await s.stop().catch(() => {});
    }
  });
});

describe("SOAP rate limit", () => {
  let s: Started;
  beforeAll(async () => {
    s = await sqlite.start({ RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_SECONDS: "60" });
  });
  afterAll(() => s.stop());

  it("third call within the window → 429 with Retry-After and a SOAP fault body", async () => {
    const call = () =>
      fetch(`${s.url}/ws/customer`, {
        method: "POST",
        headers: { "content-type": SOAP_XML, authorization: ADMIN },
        body: `<env:Envelope xmlns:env="${SOAP12}"><env:Body>${get1}</env:Body></env:Envelope>`,
      });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const res = await call();
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
    const text = await res.text();
    expect(text).toContain("<env:Fault>");
    expect(text).toContain("env:Sender");
  });
});

const CONTRACTS = join(import.meta.dirname, "..", "contracts");
const xmllint = (() => {
  try {
    execFileSync("xmllint", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!xmllint)
  console.warn("[skip] xmllint is not installed (Debian: libxml2-utils): contract validation skipped");

describe.skipIf(!xmllint)("contracts validate with xmllint", () => {
  for (const wsdl of ["customer.wsdl", "price.wsdl"]) {
    it(`${wsdl} against the WSDL 1.1 schema`, () => {
      const out = execFileSync(
        "xmllint",
        ["--noout", "--schema", join(CONTRACTS, "schemas", "wsdl11.xsd"), join(CONTRACTS, wsdl)],
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
      );
      expect(out).toBe("");
    });
  }

  it("a served response validates against customer.xsd", async () => {
    const s = await sqlite.start();
    try {
      const res = await fetch(`${s.url}/ws/customer`, {
        method: "POST",
        headers: { "content-type": SOAP_XML, authorization: ADMIN },
        body: `<env:Envelope xmlns:env="${SOAP12}"><env:Body>${get1}</env:Body></env:Envelope>`,
      });
      const text = await res.text();
      const inner = text.match(/<env:Body>([\s\S]*)<\/env:Body>/)?.[1] ?? "";
      const out = execFileSync("xmllint", ["--noout", "--schema", join(CONTRACTS, "customer.xsd"), "-"], {
        input: inner,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
      });
      expect(out).toBe("");
    } finally {
      await s.stop();
    }
  });
});
