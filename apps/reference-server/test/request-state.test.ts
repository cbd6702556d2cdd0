import { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, client, type Started, sqlite } from "./harness.js";

/**
 * The properties the @svc packages write on the framework's request only when their compatibility
 * option asks for it. The service reads what they decided through `requestState` of @svc/kernel,
 * so it answers the same when every write to them is dropped, as with the options off.
 */
const COMPAT_PROPERTIES = ["principal", "apiVersion", "apiVersionPrefix", "rateLimit"] as const;

describe("the service with the packages' request properties left unset", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  const shadowed: Array<[string, PropertyDescriptor | undefined]> = [];
  beforeAll(async () => {
    for (const name of COMPAT_PROPERTIES) {
      shadowed.push([name, Object.getOwnPropertyDescriptor(IncomingMessage.prototype, name)]);
      Object.defineProperty(IncomingMessage.prototype, name, {
        configurable: true,
        get: () => undefined,
        set: () => {},
      });
    }
    s = await sqlite.start();
    api = client(s.url);
  });
  afterAll(async () => {
    await s?.stop();
    for (const [name, descriptor] of shadowed) {
      if (descriptor === undefined)
        delete (IncomingMessage.prototype as unknown as Record<string, unknown>)[name];
      else Object.defineProperty(IncomingMessage.prototype, name, descriptor);
    }
  });

  it("POST /auth/token → 200 with a token for the Basic principal", async () => {
    const res = await api("/auth/token", { method: "POST", headers: { authorization: ADMIN } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ token_type: "Bearer" });
  });

  it("GET /v2/employees/{id} → the version 2 representation, its links under /v2", async () => {
    const page = (await (await api("/v2/employees?size=1")).json()) as {
      _embedded: { employees: Array<Record<string, unknown> & { _links: { self: { href: string } } }> };
    };
    const employee = page._embedded.employees[0];
    expect(employee).toHaveProperty("firstName");
    expect(employee).not.toHaveProperty("name");
    expect(employee?._links.self.href).toMatch(new RegExp(`^${s.url}/v2/employees/\\d+$`));
    const v1 = (await (await api("/v1/employees?size=1")).json()) as typeof page;
    expect(v1._embedded.employees[0]).toHaveProperty("name");
    expect(v1._embedded.employees[0]?._links.self.href).toMatch(new RegExp(`^${s.url}/v1/employees/\\d+$`));
  });

  it("PUT /cart → the cart of the authenticated caller", async () => {
    const put = await api("/cart", { method: "PUT", json: { items: [{ productId: 2, quantity: 1 }] } });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { owner: string }).owner).toBe("admin");
    expect((await api("/cart", { method: "DELETE" })).status).toBe(204);
  });
});
