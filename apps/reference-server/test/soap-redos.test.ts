import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, client, READER, type Started, sqlite } from "./harness.js";

const TNS = "http://svc.example.com/ws/customer/v1";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const SOAP_XML = "application/soap+xml; charset=utf-8";

/**
 * Issue 17 finding 1: a createCustomer whose email is `a@` + 128,000 dots + `@` froze the process
 * for 22 s (the Email pattern backtracked before maxLength was checked), and a read-only user was
 * enough because the write permission was checked in the handler, after schema validation. The
 * timeouts only detect a frozen process; no speed is asserted.
 */
const HANG = 15_000;
const ATTACK = `a@${".".repeat(128_000)}@`;
const MIB_EMAIL = `a@${".".repeat(1024 * 1024 - 3)}@`;

const envelope = (body: string, header = "") =>
  `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${SOAP12}" xmlns:c="${TNS}">${
    header ? `<env:Header>${header}</env:Header>` : ""
  }<env:Body>${body}</env:Body></env:Envelope>`;
const create = (id: string, email: string) =>
  `<c:CreateCustomerRequest><c:customer><c:id>${id}</c:id><c:name>Mallory</c:name><c:email>${email}</c:email></c:customer></c:CreateCustomerRequest>`;
const readerHeader =
  "<c:Authentication><c:Username>reader</c:Username><c:Password>reader</c:Password></c:Authentication>";

describe("SOAP createCustomer: hostile email values and who may send them", () => {
  let s: Started;
  let endpoint: string;
  let api: ReturnType<typeof client>;
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(endpoint, { method: "POST", headers: { "content-type": SOAP_XML, ...headers }, body });

  beforeAll(async () => {
    s = await sqlite.start();
    endpoint = `${s.url}/ws/customer`;
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it(
    "admin, email a@ + 128,000 dots + @ → 400 Sender on the email's length, /health answered meanwhile",
    async () => {
      const [res, health] = await Promise.all([
        post(envelope(create("900100", ATTACK)), { authorization: ADMIN }),
        fetch(`${s.url}/health`),
      ]);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("env:Sender");
      expect(text).toMatch(/email: length must be at most 254/);
      expect(health.status).toBe(200);
    },
    HANG,
  );

  it(
    "admin, email of 1 MiB → 413 as a SOAP fault",
    async () => {
      const res = await post(envelope(create("900101", MIB_EMAIL)), { authorization: ADMIN });
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
      expect(await res.text()).toContain("env:Sender");
    },
    HANG,
  );

  it(
    "reader (Basic), email a@ + 128,000 dots + @ → 400 NotPermitted, not a schema fault",
    async () => {
      const res = await post(envelope(create("900102", ATTACK)), { authorization: READER });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("NotPermitted");
      expect(text).not.toContain("Invalid request");
    },
    HANG,
  );

  it(
    "reader (SOAP Authentication header), email a@ + 128,000 dots + @ → 400 NotPermitted",
    async () => {
      const res = await post(envelope(create("900103", ATTACK), readerHeader));
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("NotPermitted");
      expect(text).not.toContain("Invalid request");
    },
    HANG,
  );

  it("reader (Basic), an id that is no xs:long → 400 NotPermitted: the body is never decoded", async () => {
    const res = await post(envelope(create("not-a-number", "r@example.com")), { authorization: READER });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("NotPermitted");
    expect(text).toContain("reader may not call createCustomer");
  });

  it("reader (Basic), logEvent → 400 NotPermitted, nothing listed in /events", async () => {
    const res = await post(
      envelope(
        "<c:LogEventRequest><c:event><c:type>t</c:type><c:severity>INFO</c:severity><c:message>reader-marker-7f3a</c:message></c:event></c:LogEventRequest>",
      ),
      { authorization: READER },
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("NotPermitted");
    const events = await api("/events");
    expect(events.status).toBe(200);
    expect(await events.text()).not.toContain("reader-marker-7f3a");
  });

  it("reader (Basic), getCustomer → 200: reads stay open", async () => {
    const res = await post(
      envelope("<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>"),
      { authorization: READER },
    );
    expect(res.status).toBe(200);
  });
});
