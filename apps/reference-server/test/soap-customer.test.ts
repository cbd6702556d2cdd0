import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, backends, client, READER, type Started } from "./harness.js";

const TNS = "http://svc.example.com/ws/customer/v1";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const SOAP_XML = "application/soap+xml; charset=utf-8";

interface SoapClientError {
  response?: { status: number };
  body?: string;
}

function envelope(body: string, header = ""): string {
  return `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${SOAP12}" xmlns:c="${TNS}">${
    header ? `<env:Header>${header}</env:Header>` : ""
  }<env:Body>${body}</env:Body></env:Envelope>`;
}

const adminHeader =
  "<c:Authentication><c:Username>admin</c:Username><c:Password>admin</c:Password></c:Authentication>";

describe.each(backends)("SOAP customer service on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  let endpoint: string;
  let soapClient: soap.Client;
  const post = (body: string, init: { headers?: Record<string, string> } = {}) =>
    fetch(endpoint, {
      method: "POST",
      headers: { "content-type": SOAP_XML, ...init.headers },
      body,
    });

  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
    endpoint = `${s.url}/ws/customer`;
    soapClient = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
    soapClient.setSecurity(new soap.WSSecurity("admin", "admin", { passwordType: "PasswordText" }));
  });
  afterAll(() => s.stop());

  it("GET /ws/customer?wsdl → the WSDL with the address rewritten to the URL used", async () => {
    const res = await fetch(`${endpoint}?wsdl`, { headers: { "x-forwarded-host": "ignored.example" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/wsdl\+xml/);
    const text = await res.text();
    expect(text).toContain(`location="${endpoint}"`);
    expect(text).not.toContain("localhost:3000");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-correlation-id")).toBeTruthy();
  });

  it("GET ?wsdl and POST getCustomer asking gzip → both gzip-coded, Vary: Accept-Encoding; identity without it", async () => {
    const coded = await fetch(`${endpoint}?wsdl`, { headers: { "accept-encoding": "gzip" } });
    expect(coded.headers.get("content-encoding")).toBe("gzip");
    expect(coded.headers.get("etag")).toMatch(/^W\/"/);
    expect(coded.headers.get("vary")).toMatch(/Accept-Encoding/);
    expect(await coded.text()).toContain(`location="${endpoint}"`);
    const plain = await fetch(`${endpoint}?wsdl`, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("etag")).toBe((coded.headers.get("etag") as string).slice(2));
    const answer = await post(
      envelope(`<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>`, adminHeader),
      {
        headers: { "accept-encoding": "gzip" },
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("vary")).toMatch(/Accept-Encoding/);
    // Below compression()'s default threshold (1024 bytes) the answer goes as it is.
    expect(answer.headers.get("content-encoding")).toBeNull();
    expect(await answer.text()).toContain("GetCustomerResponse");
  });

  it("soap client: getCustomer of a seeded customer → the same customer as GET /customers/{id}", async () => {
    const rest = (await (await api("/customers/1")).json()) as { id: number; name: string; email: string };
    const [result] = await soapClient.getCustomerAsync({ customerId: "1" });
    // The soap client decodes xs:long as a JS number.
    expect(result.customer).toEqual({ id: 1, name: rest.name, email: rest.email });
  });

  it("soap client: createCustomer with id 900001 → customerId 900001, then visible over REST", async () => {
    const [result] = await soapClient.createCustomerAsync({
      customer: { id: "900001", name: "Soap Created", email: "soap.created@example.com" },
    });
    expect(String(result.customerId)).toBe("900001");
    const res = await api("/customers/900001");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: 900001,
      name: "Soap Created",
      email: "soap.created@example.com",
    });
  });

  it("REST POST /customers after a SOAP create with a high id → a free id of the server's own, no clash", async () => {
    await soapClient.createCustomerAsync({
      customer: { id: "950000", name: "High Id", email: "high.id@example.com" },
    });
    const res = await api("/customers", {
      method: "POST",
      json: { name: "After High", email: "after.high@example.com", city: "Berlin" },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: number };
    // The server's ids do not jump after a client's: they go on from its own, skipping taken ones.
    expect(created.id).not.toBe(950000);
    expect((await api(`/customers/${created.id}`)).status).toBe(200);
    expect(((await (await api("/customers/950000")).json()) as { name: string }).name).toBe("High Id");
  });

  it("REST POST /customers → soap client getCustomer sees it", async () => {
    const res = await api("/customers", {
      method: "POST",
      json: { name: "Rest Made", email: "rest.made@example.com", city: "Paris" },
    });
    const created = (await res.json()) as { id: number };
    const [result] = await soapClient.getCustomerAsync({ customerId: String(created.id) });
    expect(result.customer).toEqual({ id: created.id, name: "Rest Made", email: "rest.made@example.com" });
  });

  it("getCustomer of an unknown id → 400, declared CustomerNotFound fault with Detail", async () => {
    const res = await post(
      envelope(
        "<c:GetCustomerRequest><c:customerId>9223372036854775807</c:customerId></c:GetCustomerRequest>",
        adminHeader,
      ),
    );
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("<env:Value>env:Sender</env:Value>");
    expect(text).toMatch(/CustomerNotFound<\/env:Value>/);
    expect(text).toMatch(/<env:Detail><[\w:]*CustomerNotFound[^>]*><[\w:]*customerId>9223372036854775807</);
  });

  it("soap client: createCustomer with a taken email → Sender fault, nothing created", async () => {
    const err = (await soapClient
      .createCustomerAsync({ customer: { id: "900002", name: "Dup", email: "soap.created@example.com" } })
      .catch((e: unknown) => e)) as SoapClientError;
    expect(err.response?.status).toBe(400);
    expect(String(err.body)).toContain("DuplicateEmail");
    expect((await api("/customers/900002")).status).toBe(404);
  });

  it("createCustomer with a taken id → Sender fault DuplicateCustomerId", async () => {
    const err = (await soapClient
      .createCustomerAsync({ customer: { id: "1", name: "Dup", email: "dup.id@example.com" } })
      .catch((e: unknown) => e)) as SoapClientError;
    expect(err.response?.status).toBe(400);
    expect(String(err.body)).toContain("DuplicateCustomerId");
  });

  it("createCustomer with id 3000000000 (beyond 32 bits) → customerId 3000000000", async () => {
    const [result] = await soapClient.createCustomerAsync({
      customer: { id: "3000000000", name: "Big", email: "big@example.com" },
    });
    expect(String(result.customerId)).toBe("3000000000");
    expect((await api("/customers/3000000000")).status).toBe(200);
  });

  it("createCustomer with id -5 → Sender fault InvalidCustomer", async () => {
    const err = (await soapClient
      .createCustomerAsync({ customer: { id: "-5", name: "Neg", email: "neg@example.com" } })
      .catch((e: unknown) => e)) as SoapClientError;
    expect(err.response?.status).toBe(400);
    expect(String(err.body)).toContain("InvalidCustomer");
  });

  it("soap client: logEvent (one-way) → stored and listed by GET /events", async () => {
    await soapClient.logEventAsync({
      event: { type: "audit", severity: "WARN", message: "soap hello", customerId: "9223372036854775806" },
    });
    const res = await api("/events?type=audit");
    expect(res.status).toBe(200);
    const page = (await res.json()) as { _embedded: { events: Array<Record<string, unknown>> } };
    expect(page._embedded.events).toContainEqual(
      expect.objectContaining({
        message: "soap hello",
        severity: "WARN",
        customerId: "9223372036854775806",
        submittedBy: "admin",
      }),
    );
  });

  it("soap client: sendNotification (one-way) → queued and listed by GET /notifications", async () => {
    await soapClient.sendNotificationAsync({ message: "ping from soap" });
    const page = (await (await api("/notifications?status=QUEUED")).json()) as {
      _embedded: { notifications: Array<Record<string, unknown>> };
    };
    expect(page._embedded.notifications).toContainEqual(
      expect.objectContaining({ message: "ping from soap", status: "QUEUED" }),
    );
  });

  it("sendNotification → 202 with an empty body", async () => {
    const res = await post(
      envelope(
        "<c:SendNotificationRequest><c:message>raw</c:message></c:SendNotificationRequest>",
        adminHeader,
      ),
    );
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
  });

  it("10 concurrent createCustomer with one email → exactly one created, the rest DuplicateEmail", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        post(
          envelope(
            `<c:CreateCustomerRequest><c:customer><c:id>${960000 + i}</c:id><c:name>Race ${i}</c:name><c:email>race@example.com</c:email></c:customer></c:CreateCustomerRequest>`,
            adminHeader,
          ),
        ).then(async (r) => ({ status: r.status, text: await r.text() })),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.status === 400);
    expect(refused).toHaveLength(9);
    for (const r of refused) expect(r.text).toContain("DuplicateEmail");
    const page = (await (await api("/customers?email=race@example.com")).json()) as {
      page: { totalElements: number };
    };
    expect(page.page.totalElements).toBe(1);
  });

  it("logEvent with severity LOUD (not in the enumeration) → 400 Sender, nothing stored", async () => {
    const res = await post(
      envelope(
        "<c:LogEventRequest><c:event><c:type>bad</c:type><c:severity>LOUD</c:severity><c:message>m</c:message></c:event></c:LogEventRequest>",
        adminHeader,
      ),
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("env:Sender");
    const page = (await (await api("/events?type=bad")).json()) as { page: { totalElements: number } };
    expect(page.page.totalElements).toBe(0);
  });

  it("GET /events without credentials → 401 (the resource API's rule)", async () => {
    expect((await fetch(`${s.url}/events`)).status).toBe(401);
  });

  describe("credentials", () => {
    const get1 = envelope("<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>");

    it("no credentials at all → 400 Sender fault wsse:FailedAuthentication", async () => {
      const res = await post(get1);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("env:Sender");
      expect(text).toContain("FailedAuthentication");
      expect(text).toContain(WSSE);
    });

    it("Authentication header with a wrong password → 400 Sender fault", async () => {
      const res = await post(
        envelope(
          "<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>",
          "<c:Authentication><c:Username>admin</c:Username><c:Password>nope</c:Password></c:Authentication>",
        ),
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("FailedAuthentication");
    });

    it("an Authentication block of another namespace (urn:other) with admin's password → FailedAuthentication, nothing stored", async () => {
      const foreign =
        '<x:Authentication xmlns:x="urn:other"><x:Username>admin</x:Username><x:Password>admin</x:Password></x:Authentication>';
      const message = `foreign-credentials-${Math.random().toString(36).slice(2)}`;
      const res = await post(
        envelope(
          `<c:SendNotificationRequest><c:message>${message}</c:message></c:SendNotificationRequest>`,
          foreign,
        ),
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("FailedAuthentication");
      const list = (await (await api("/notifications?sort=id,desc&size=100")).json()) as {
        _embedded: { notifications: Array<{ message: string }> };
      };
      expect(list._embedded.notifications.map((n) => n.message)).not.toContain(message);
    });

    it('an Authentication block of another namespace with mustUnderstand="true" → 500 MustUnderstand fault', async () => {
      const res = await post(
        envelope(
          "<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>",
          `<x:Authentication xmlns:x="urn:other" env:mustUnderstand="true"><x:Username>admin</x:Username><x:Password>admin</x:Password></x:Authentication>${adminHeader}`,
        ),
      );
      expect(res.status).toBe(500);
      expect(await res.text()).toContain("env:MustUnderstand");
    });

    it("the customer service's Authentication block sent to /ws/PriceService → FailedAuthentication", async () => {
      const res = await fetch(`${s.url}/ws/PriceService`, {
        method: "POST",
        headers: { "content-type": SOAP_XML },
        body: `<env:Envelope xmlns:env="${SOAP12}" xmlns:c="${TNS}" xmlns:p="http://svc.example.com/ws/price/v1"><env:Header>${adminHeader}</env:Header><env:Body><p:GetPrice><p:Item>Handbook 1</p:Item><p:Category>Books</p:Category></p:GetPrice></env:Body></env:Envelope>`,
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("FailedAuthentication");
    });

    it("HTTP Authorization: Basic admin → 200", async () => {
      const res = await post(get1, { headers: { authorization: ADMIN } });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/<(\w+:)?id>1<\/(\w+:)?id>/);
    });

    it("HTTP Authorization: Basic with a wrong password → 401 as a SOAP fault", async () => {
      const res = await post(get1, {
        headers: { authorization: `Basic ${Buffer.from("admin:wrong").toString("base64")}` },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
      expect(await res.text()).toContain("env:Sender");
    });

    it("HTTP Bearer token from POST /auth/token → 200", async () => {
      const token = (await (await api("/auth/token", { method: "POST" })).json()) as { access_token: string };
      const res = await post(get1, { headers: { authorization: `Bearer ${token.access_token}` } });
      expect(res.status).toBe(200);
    });

    it("WS-Security UsernameToken with a wrong password → 400 wsse:FailedAuthentication", async () => {
      const bad = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
      bad.setSecurity(new soap.WSSecurity("admin", "wrong", { passwordType: "PasswordText" }));
      const err = (await bad
        .getCustomerAsync({ customerId: "1" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(400);
      expect(String(err.body)).toContain("FailedAuthentication");
    });

    it("WS-Security PasswordDigest of a demo user → 200", async () => {
      const digest = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
      digest.setSecurity(new soap.WSSecurity("reader", "reader", { passwordType: "PasswordDigest" }));
      const [result] = await digest.getCustomerAsync({ customerId: "1" });
      expect(result.customer.id).toBe(1);
    });

    it("Basic admin over HTTP and a reader Authentication header → 400 wsse:InvalidSecurity", async () => {
      const res = await post(
        envelope(
          "<c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>",
          "<c:Authentication><c:Username>reader</c:Username><c:Password>reader</c:Password></c:Authentication>",
        ),
        { headers: { authorization: ADMIN } },
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("InvalidSecurity");
    });

    it("soap client with BasicAuthSecurity (HTTP Authorization) → 200", async () => {
      const basic = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
      basic.setSecurity(new soap.BasicAuthSecurity("reader", "reader"));
      const [result] = await basic.getCustomerAsync({ customerId: "2" });
      expect(result.customer.id).toBe(2);
    });

    it("soap client sending the Authentication header block the WSDL declares → 200; a wrong password → FailedAuthentication", async () => {
      const declared = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
      // The binding's soap12:header names tns:Authentication (customer.xsd), in the contract's
      // namespace; node-soap writes it into env:Header as given.
      declared.addSoapHeader(
        { Authentication: { Username: "reader", Password: "reader" } },
        "Authentication",
        "tns",
        "http://svc.example.com/ws/customer/v1",
      );
      const [result] = await declared.getCustomerAsync({ customerId: "2" });
      expect(result.customer.id).toBe(2);
      expect(declared.lastRequest).toMatch(
        /<(\w+:)?Authentication xmlns(:\w+)?="http:\/\/svc\.example\.com\/ws\/customer\/v1"><(\w+:)?Username>reader</,
      );
      declared.clearSoapHeaders();
      declared.addSoapHeader(
        { Authentication: { Username: "reader", Password: "wrong" } },
        "Authentication",
        "tns",
        "http://svc.example.com/ws/customer/v1",
      );
      const err = (await declared
        .getCustomerAsync({ customerId: "2" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(400);
      expect(String(err.body)).toContain("FailedAuthentication");
    });

    it("reader calling createCustomer → 400 Sender fault NotPermitted, nothing created", async () => {
      const res = await post(
        envelope(
          "<c:CreateCustomerRequest><c:customer><c:id>900010</c:id><c:name>R</c:name><c:email>r@example.com</c:email></c:customer></c:CreateCustomerRequest>",
        ),
        { headers: { authorization: READER } },
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("NotPermitted");
      expect((await api("/customers/900010")).status).toBe(404);
    });
  });
});
