import { randomBytes, randomUUID } from "node:crypto";
import { serviceUrl } from "@svc/test-utils";
import pg from "pg";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, type Db } from "../src/db/database.js";
import { migrate, migrator } from "../src/db/migrations.js";
import { ADMIN, backends, client, type Started } from "./harness.js";

/**
 * Issue 18, points 2 to 4: ids are 64-bit end to end, money is exact, and the employee name a
 * client sees is the one it can sort and filter on. Every case runs on SQLite and PostgreSQL.
 */

const TNS = "http://svc.example.com/ws/customer/v1";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const SOAP_XML = "application/soap+xml; charset=utf-8";
const AUTH =
  "<c:Authentication><c:Username>admin</c:Username><c:Password>admin</c:Password></c:Authentication>";
const MAX_LONG = "9223372036854775807";

function envelope(body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${SOAP12}" xmlns:c="${TNS}"><env:Header>${AUTH}</env:Header><env:Body>${body}</env:Body></env:Envelope>`;
}

const createCustomer = (id: string, name: string, email: string) =>
  envelope(
    `<c:CreateCustomerRequest><c:customer><c:id>${id}</c:id><c:name>${name}</c:name><c:email>${email}</c:email></c:customer></c:CreateCustomerRequest>`,
  );
const getCustomer = (id: string) =>
  envelope(`<c:GetCustomerRequest><c:customerId>${id}</c:customerId></c:GetCustomerRequest>`);

/** The digits of `<customerId>` in a createCustomer response. */
function customerIdOf(xml: string): string | undefined {
  return /<(?:\w+:)?customerId>(-?\d+)</.exec(xml)?.[1];
}

/** Sum of decimal amounts with at most two fraction digits, in cents, exactly (no float sum). */
function cents(amount: number): bigint {
  const [whole = "0", fraction = ""] = String(amount).replace("-", "").split(".");
  expect(fraction.length, `${amount} has more than 2 decimals`).toBeLessThanOrEqual(2);
  const value = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, "0"));
  return amount < 0 ? -value : value;
}

describe.each(backends)("issue 18 data types on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  const soapPost = (body: string) =>
    fetch(`${s.url}/ws/customer`, { method: "POST", headers: { "content-type": SOAP_XML }, body });
  const transfer = (json: unknown) =>
    api("/transfers", { method: "POST", headers: { "idempotency-key": randomUUID() }, json });
  const rawTransfer = (body: string) =>
    api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": randomUUID(), "content-type": "application/json" },
      body,
    });

  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  describe("64-bit customer ids", () => {
    it("createCustomer with id 5000000000 → customerId 5000000000, GET /customers/5000000000 → that id", async () => {
      const res = await soapPost(createCustomer("5000000000", "Five Billion", "five.billion@example.com"));
      expect(res.status).toBe(200);
      expect(customerIdOf(await res.text())).toBe("5000000000");
      const rest = await api("/customers/5000000000");
      expect(rest.status).toBe(200);
      expect(await rest.json()).toMatchObject({ id: 5000000000, name: "Five Billion" });
    });

    it(`createCustomer with id ${MAX_LONG} → every digit in SOAP, JSON, HAL+JSON and XML`, async () => {
      const res = await soapPost(createCustomer(MAX_LONG, "Max Long", "max.long@example.com"));
      expect(res.status).toBe(200);
      expect(customerIdOf(await res.text())).toBe(MAX_LONG);

      const got = await soapPost(getCustomer(MAX_LONG));
      expect(got.status).toBe(200);
      expect(await got.text()).toMatch(new RegExp(`<(?:\\w+:)?id>${MAX_LONG}<`));

      const json = await api(`/customers/${MAX_LONG}`);
      expect(json.status).toBe(200);
      const text = await json.text();
      // The exact digits, not 9223372036854776000 (the nearest double).
      expect(text).toContain(`"id":${MAX_LONG},`);
      expect(text).toContain(`/customers/${MAX_LONG}"`);
      const hal = await api(`/customers/${MAX_LONG}`, { headers: { accept: "application/hal+json" } });
      expect(await hal.text()).toContain(`"id":${MAX_LONG},`);
      const xml = await api(`/customers/${MAX_LONG}`, { headers: { accept: "application/xml" } });
      expect(await xml.text()).toContain(`<id>${MAX_LONG}</id>`);
      const list = await api("/customers?email=max.long@example.com");
      expect(await list.text()).toContain(`"id":${MAX_LONG},`);
    });

    it(`PATCH with If-Match, then DELETE of customer ${MAX_LONG} → 200 with the exact id, then 204`, async () => {
      await soapPost(createCustomer("9223372036854775806", "Almost Max", "almost.max@example.com"));
      const path = "/customers/9223372036854775806";
      const read = await api(path);
      const etag = read.headers.get("etag") ?? "";
      expect(etag).not.toBe("");
      const patched = await api(path, {
        method: "PATCH",
        headers: { "if-match": etag },
        json: { city: "Lisbon" },
      });
      expect(patched.status).toBe(200);
      const text = await patched.text();
      expect(text).toContain('"id":9223372036854775806,');
      expect(text).toContain('"city":"Lisbon"');
      const stale = await api(path, {
        method: "PATCH",
        headers: { "if-match": etag },
        json: { city: "Rome" },
      });
      expect(stale.status).toBe(412);
      expect((await api(path, { method: "DELETE" })).status).toBe(204);
      expect((await api(path)).status).toBe(404);
    });

    it(`POST /customers after a client took id ${MAX_LONG}, and after it is deleted → 201 every time, each readable`, async () => {
      // The max-long customer of the case above exists; the server's own ids must go on.
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api("/customers", {
          method: "POST",
          json: { name: `After Max ${i}`, email: `after.max.${i}@example.com`, city: "Berlin" },
        });
        expect(res.status).toBe(201);
        const body = (await res.json()) as { id: number };
        expect(Number.isSafeInteger(body.id)).toBe(true);
        ids.push(body.id);
        const location = new URL(res.headers.get("location") ?? "").pathname;
        expect((await api(location)).status).toBe(200);
      }
      expect(new Set(ids).size).toBe(3);
      expect((await api(`/customers/${MAX_LONG}`, { method: "DELETE" })).status).toBe(204);
      const after = await api("/customers", {
        method: "POST",
        json: { name: "After Delete", email: "after.delete@example.com", city: "Berlin" },
      });
      expect(after.status).toBe(201);
      expect(((await after.json()) as { id: number }).id).toBeGreaterThan(Math.max(...ids));
    });

    it("createCustomer with id 2147483647 (the old 32-bit end) → later POST /customers still 201", async () => {
      const res = await soapPost(createCustomer("2147483647", "Int Max", "int.max@example.com"));
      expect(customerIdOf(await res.text())).toBe("2147483647");
      const rest = await api("/customers", {
        method: "POST",
        json: { name: "After Int Max", email: "after.int.max@example.com", city: "Paris" },
      });
      expect(rest.status).toBe(201);
      const { id } = (await rest.json()) as { id: number };
      expect(id).toBeLessThan(2147483647);
      expect((await api(`/customers/${id}`)).status).toBe(200);
    });

    it("the server's ids skip the ids clients took: N, then SOAP takes N+1 and N+2, then POST → N+3", async () => {
      const post = async (n: number) => {
        const res = await api("/customers", {
          method: "POST",
          json: { name: `Seq ${n}`, email: `seq.${n}@example.com`, city: "Vienna" },
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { id: number }).id;
      };
      const first = await post(1);
      for (const id of [first + 1, first + 2]) {
        const res = await soapPost(createCustomer(String(id), `Taken ${id}`, `taken.${id}@example.com`));
        expect(customerIdOf(await res.text())).toBe(String(id));
      }
      expect(await post(2)).toBe(first + 3);
    });

    it("createCustomer with id 0 → the service assigns the next id and returns it", async () => {
      const res = await soapPost(createCustomer("0", "Assigned", "assigned@example.com"));
      expect(res.status).toBe(200);
      const id = customerIdOf(await res.text());
      expect(id).toMatch(/^[1-9]\d*$/);
      const rest = await api(`/customers/${id}`);
      expect(rest.status).toBe(200);
      expect(await rest.json()).toMatchObject({ id: Number(id), name: "Assigned" });
      const again = await soapPost(createCustomer("0", "Assigned Too", "assigned.too@example.com"));
      const second = customerIdOf(await again.text());
      expect(second).not.toBe(id);
    });

    it('a customer created over SOAP (no city in the contract) reads with city "" and that representation PUTs back → 200', async () => {
      const res = await soapPost(createCustomer("0", "No City", "no.city@example.com"));
      const id = customerIdOf(await res.text());
      const read = (await (await api(`/customers/${id}`)).json()) as Record<string, unknown>;
      expect(read).toMatchObject({ name: "No City", city: "" });
      // PUT takes the whole representation (spec 4.1 rule 2): the one the service itself serves.
      const { _links, id: _id, ...state } = read;
      const put = await api(`/customers/${id}`, { method: "PUT", json: { ...state, name: "Still No City" } });
      expect(put.status).toBe(200);
      expect(await put.json()).toMatchObject({ name: "Still No City", city: "" });
    });

    it("soap client (node-soap) createCustomer with id 0 → a customerId it can read back", async () => {
      const c = await soap.createClientAsync(`${s.url}/ws/customer?wsdl`, { forceSoap12Headers: true });
      c.setSecurity(new soap.WSSecurity("admin", "admin", { passwordType: "PasswordText" }));
      const [result] = await c.createCustomerAsync({
        customer: { id: 0, name: "Node Soap", email: "node.soap@example.com" },
      });
      const id = String(result.customerId);
      expect(id).toMatch(/^[1-9]\d*$/);
      const [read] = await c.getCustomerAsync({ customerId: id });
      expect(read.customer).toMatchObject({ name: "Node Soap", email: "node.soap@example.com" });
    });

    it.each([
      ["-1", "InvalidCustomer"],
      ["-9223372036854775808", "InvalidCustomer"],
      ["9223372036854775808", "env:Sender"],
    ])("createCustomer with id %s → 400 Sender fault (%s)", async (id, expected) => {
      const res = await soapPost(createCustomer(id, "Bad Id", `bad.${id.length}.${id[0]}@example.com`));
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("env:Sender");
      expect(text).toContain(expected);
    });

    it.each([
      ["9223372036854775808", 400],
      ["18446744073709551616", 400],
      ["99999999999999999999999999999999999999", 400],
      ["9223372036854775805", 404],
      ["9007199254740993", 404],
    ])("GET /customers/%s → %i with the error record", async (id, status) => {
      const res = await api(`/customers/${id}`);
      expect(res.status).toBe(status);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status, path: `/customers/${id}` });
      expect(typeof body.timestamp).toBe("string");
    });

    it("GET /orders?customerId=7000000001 → that customer's orders, as /customers/7000000001/orders lists them", async () => {
      const created = await soapPost(
        createCustomer("7000000001", "Seven Billion", "seven.billion@example.com"),
      );
      expect(created.status).toBe(200);
      const order = await api("/orders", {
        method: "POST",
        json: { customerId: 7000000001, items: [{ productId: 1, quantity: 1 }] },
      });
      expect(order.status).toBe(201);
      const { id } = (await order.json()) as { id: number };
      const res = await api("/orders?customerId=7000000001");
      expect(res.status).toBe(200);
      const page = (await res.json()) as { _embedded: { orders: Array<{ id: number; customerId: number }> } };
      expect(page._embedded.orders.map((o) => [o.id, o.customerId])).toEqual([[id, 7000000001]]);
      // The whole xs:long range, as in a path; past it no customer can exist: 400.
      expect((await api(`/orders?customerId=${MAX_LONG}`)).status).toBe(200);
      expect((await api("/orders?customerId=9223372036854775808")).status).toBe(400);
      // A rating is no id: its 32-bit column keeps its bound (PostgreSQL would fail the comparison).
      expect((await api("/products/1/reviews?rating=3000000000")).status).toBe(400);
    });

    it("GET /customers/9223372036854775808/orders → 400; DELETE /customers/9223372036854775808 → 400", async () => {
      expect((await api("/customers/9223372036854775808/orders")).status).toBe(400);
      expect((await api("/customers/9223372036854775808", { method: "DELETE" })).status).toBe(400);
    });
  });

  describe("exact money", () => {
    it.each([
      ['{"fromAccountId":6,"toAccountId":1,"amount":5e-11}', 400],
      // Three decimals pass the schema (some currencies have them) and break EUR's rule: 422.
      ['{"fromAccountId":6,"toAccountId":1,"amount":0.001}', 422],
      ['{"fromAccountId":6,"toAccountId":1,"amount":1.005}', 422],
      ['{"fromAccountId":6,"toAccountId":1,"amount":0.0001}', 400],
      ['{"fromAccountId":6,"toAccountId":1,"amount":1e-7}', 400],
      ['{"fromAccountId":6,"toAccountId":1,"amount":1e999}', 400],
      ['{"fromAccountId":6,"toAccountId":1,"amount":1e300}', 400],
      ['{"fromAccountId":6,"toAccountId":1,"amount":"10.00"}', 400],
      ['{"fromAccountId":6,"toAccountId":1,"amount":-0.01}', 422],
    ])("POST /transfers %s → %i with the error record, no transfer", async (body, status) => {
      const before = (await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } };
      const res = await rawTransfer(body);
      expect(res.status).toBe(status);
      const record = (await res.json()) as { status: number; errors?: Array<{ field: string }> };
      expect(record.status).toBe(status);
      expect(record.errors?.[0]?.field).toBe("amount");
      const after = (await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } };
      expect(after.page.totalElements).toBe(before.page.totalElements);
    });

    it("twenty transfers of 0.01 → the target gains exactly 0.20, the source loses exactly 0.20", async () => {
      const read = async (id: number) =>
        ((await (await api(`/accounts/${id}`)).json()) as { balance: number }).balance;
      const [from, to] = [await read(6), await read(1)];
      const locations = [];
      for (let i = 0; i < 20; i++) {
        const res = await transfer({ fromAccountId: 6, toAccountId: 1, amount: 0.01 });
        expect(res.status).toBe(202);
        locations.push(new URL(res.headers.get("location") ?? "").pathname);
      }
      await settle(locations);
      expect(cents(await read(6))).toBe(cents(from) - 20n);
      expect(cents(await read(1))).toBe(cents(to) + 20n);
      // 0.1 + 0.2 in binary floating point is 0.30000000000000004; here it is 0.3.
      const start = await read(2);
      await settle(
        await Promise.all(
          [0.1, 0.2].map(
            async (amount) =>
              new URL(
                (await transfer({ fromAccountId: 6, toAccountId: 2, amount })).headers.get("location") ?? "",
              ).pathname,
          ),
        ),
      );
      expect(cents(await read(2))).toBe(cents(start) + 30n);
    }, 120_000);

    it("60 transfers, 30 of them concurrent, some failing for funds → the sum of all balances is unchanged", async () => {
      const total = async () => {
        const page = (await (await api("/accounts?size=100")).json()) as {
          _embedded: { accounts: Array<{ balance: number; currency: string }> };
        };
        return page._embedded.accounts
          .filter((a) => a.currency === "EUR")
          .reduce((sum, a) => sum + cents(a.balance), 0n);
      };
      const before = await total();
      const amounts = [0.01, 0.07, 12.34, 0.1, 0.2, 999.99, 1500, 3.33];
      const pairs = (i: number) => ({
        fromAccountId: (i % 5) + 1,
        toAccountId: ((i + 2) % 6) + 1 === (i % 5) + 1 ? 6 : ((i + 2) % 6) + 1,
        amount: amounts[i % amounts.length] as number,
      });
      const locations: string[] = [];
      for (let i = 0; i < 30; i++) {
        const res = await transfer(pairs(i));
        expect(res.status).toBe(202);
        locations.push(new URL(res.headers.get("location") ?? "").pathname);
      }
      const concurrent = await Promise.all(Array.from({ length: 30 }, (_, i) => transfer(pairs(i + 30))));
      for (const res of concurrent) {
        expect(res.status).toBe(202);
        locations.push(new URL(res.headers.get("location") ?? "").pathname);
      }
      const outcomes = await settle(locations);
      expect(outcomes.filter((o) => o === "COMPLETED").length).toBeGreaterThan(0);
      expect(await total()).toBe(before);
    }, 120_000);

    it("40 concurrent transfers between two accounts, half each way → all accepted, all COMPLETED, balances as before", async () => {
      const open = async (number: string) => {
        const res = await api("/accounts", {
          method: "POST",
          json: { number, owner: "both ways", currency: "EUR", balance: 100 },
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { id: number }).id;
      };
      const a = await open("BOTH-WAYS-A");
      const b = await open("BOTH-WAYS-B");
      // On PostgreSQL each transfer locks the row it debits, then the row it credits, until commit:
      // A → B and B → A locked them in opposite orders and deadlocked, the failed transactions held
      // the pool's connections (so POSTs waited for one: 503) and left transfers PENDING.
      const accepted = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          transfer(
            i % 2 === 0
              ? { fromAccountId: a, toAccountId: b, amount: 1 }
              : { fromAccountId: b, toAccountId: a, amount: 1 },
          ).then((res) => res.status),
        ),
      );
      expect(accepted.filter((status) => status !== 202)).toEqual([]);
      const count = async (query: string) =>
        ((await (await api(`/transfers?size=1&${query}`)).json()) as { page: { totalElements: number } }).page
          .totalElements;
      const unsettled = async () => {
        let n = 0;
        for (const from of [a, b])
          for (const status of ["PENDING", "PROCESSING"])
            n += await count(`fromAccountId=${from}&status=${status}`);
        return n;
      };
      for (let i = 0; i < 200 && (await unsettled()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await count(`fromAccountId=${a}&status=COMPLETED`)).toBe(20);
      expect(await count(`fromAccountId=${b}&status=COMPLETED`)).toBe(20);
      for (const id of [a, b]) {
        expect(((await (await api(`/accounts/${id}`)).json()) as { balance: number }).balance).toBe(100);
      }
    }, 120_000);

    it("balances and prices read back with the exact decimals sent", async () => {
      const product = await api("/products", {
        method: "POST",
        json: { name: "Dime", sku: "DIME-1", categoryId: 1, price: 0.1, stock: 1 },
      });
      expect(product.status).toBe(201);
      const text = await product.text();
      expect(text).toContain('"price":0.1,');
      const { id } = JSON.parse(text) as { id: number };
      const soapPrice = await fetch(`${s.url}/ws/PriceService`, {
        method: "POST",
        headers: { "content-type": `${SOAP_XML}; action=GetPrice`, authorization: ADMIN },
        body: `<env:Envelope xmlns:env="${SOAP12}" xmlns:p="http://svc.example.com/ws/price/v1"><env:Body><p:GetPrice><p:Item>DIME-1</p:Item><p:Category>Books</p:Category></p:GetPrice></env:Body></env:Envelope>`,
      });
      expect(soapPrice.status).toBe(200);
      expect(await soapPrice.text()).toMatch(/>0\.10</);
      expect((await api(`/products/${id}`, { method: "DELETE" })).status).toBe(204);

      const account = await api("/accounts", {
        method: "POST",
        json: { number: "DE00 EXACT", owner: "exact", currency: "EUR", balance: 1234567890.12 },
      });
      expect(account.status).toBe(201);
      expect(await account.text()).toContain('"balance":1234567890.12,');
    });

    it.each([
      ["/products", { name: "P", sku: "P-FINE", categoryId: 1, price: 19.999, stock: 1 }, "price"],
      ["/products", { name: "P", sku: "P-TINY", categoryId: 1, price: 5e-11, stock: 1 }, "price"],
      [
        "/employees",
        { name: "A B", email: "ab.fine@example.com", department: "Sales", city: "X", salary: 1000.001 },
        "salary",
      ],
      ["/accounts", { number: "DE00 F", owner: "f", currency: "EUR", balance: 10.001 }, "balance"],
      ["/accounts", { number: "JP00 F", owner: "f", currency: "JPY", balance: 10.5 }, "balance"],
    ])("POST %s with %j → 400 or 422 naming the field", async (path, json, field) => {
      const res = await api(path, { method: "POST", json });
      expect([400, 422]).toContain(res.status);
      const record = (await res.json()) as { errors?: Array<{ field: string }> };
      expect(record.errors?.map((e) => e.field)).toContain(field);
    });

    it("a JPY account: whole yen accepted, a transfer of 0.5 yen → 422", async () => {
      const open = async (number: string) => {
        const res = await api("/accounts", {
          method: "POST",
          json: { number, owner: "yen", currency: "JPY", balance: 1000 },
        });
        expect(res.status).toBe(201);
        return (await res.json()) as { id: number; balance: number };
      };
      const a = await open("JP00 A");
      const b = await open("JP00 B");
      expect(a.balance).toBe(1000);
      const half = await transfer({ fromAccountId: a.id, toAccountId: b.id, amount: 0.5 });
      expect(half.status).toBe(422);
      const whole = await transfer({ fromAccountId: a.id, toAccountId: b.id, amount: 7 });
      expect(whole.status).toBe(202);
      await settle([new URL(whole.headers.get("location") ?? "").pathname]);
      expect(((await (await api(`/accounts/${b.id}`)).json()) as { balance: number }).balance).toBe(1007);
    });
  });

  describe("employee names", () => {
    interface Employee {
      id: number;
      name: string;
    }
    const names = async (query: string) =>
      ((await (await api(`/employees?${query}`)).json()) as { _embedded: { employees: Employee[] } })
        ._embedded.employees;

    it("the 60 seeded employees have 60 distinct names", async () => {
      const all = await names("size=100");
      expect(all.length).toBeGreaterThanOrEqual(60);
      expect(new Set(all.map((e) => e.name)).size).toBe(all.length);
    });

    it("sort=name → by the full name: Alan Kay, Alan Perlis, Alan Turing in that order", async () => {
      const sorted = (await names("size=100&sort=name")).map((e) => e.name);
      const alans = sorted.filter((n) => n.startsWith("Alan "));
      expect(alans).toEqual(["Alan Kay", "Alan Perlis", "Alan Turing"]);
      const desc = (await names("size=100&sort=name,desc")).map((e) => e.name);
      expect(desc.filter((n) => n.startsWith("Alan "))).toEqual(["Alan Turing", "Alan Perlis", "Alan Kay"]);
    });

    it.each([
      ["Ada Lovelace", ["Ada Lovelace"]],
      ["ada lovelace", ["Ada Lovelace"]],
      ["ALAN T", ["Alan Turing"]],
      ["lan Tur", ["Alan Turing"]],
      ["Lovelace", ["Ada Lovelace"]],
      ["Ada  Lovelace", []],
    ])("?name=%s → %j", async (name, expected) => {
      const found = await names(`name=${encodeURIComponent(name)}`);
      expect(found.map((e) => e.name)).toEqual(expected);
    });

    it("?name= matches a name written through v1 as first and last name", async () => {
      const res = await api("/employees", {
        method: "POST",
        json: {
          name: "Evelyn Boyd Granville",
          email: "evelyn.granville@example.com",
          department: "Finance",
          city: "London",
          salary: 70000.5,
        },
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ name: "Evelyn Boyd Granville", salary: 70000.5 });
      expect((await names("name=n%20Boyd%20G")).map((e) => e.name)).toEqual(["Evelyn Boyd Granville"]);
    });

    it.each(["Émilie", "émilie", "ÉMILIE", "du Châtelet", "DU CHÂTELET"])(
      "?name=%s → Émilie du Châtelet: case-insensitive beyond ASCII, on every database",
      async (name) => {
        const email = "emilie.chatelet@example.com";
        if ((await names(`email=${encodeURIComponent(email)}`)).length === 0) {
          const res = await api("/employees", {
            method: "POST",
            json: { name: "Émilie du Châtelet", email, department: "Finance", city: "Paris", salary: 1 },
          });
          expect(res.status).toBe(201);
        }
        const found = await names(`name=${encodeURIComponent(name)}`);
        expect(found.map((e) => e.name)).toEqual(["Émilie du Châtelet"]);
      },
    );
  });

  /** Polls transfer status resources until none is pending; returns their final statuses. */
  async function settle(locations: string[]): Promise<string[]> {
    const statuses: string[] = [];
    for (const location of locations) {
      let status = "PENDING";
      for (let i = 0; i < 200 && (status === "PENDING" || status === "PROCESSING"); i++) {
        status = ((await (await api(location)).json()) as { status: string }).status;
        if (status === "PENDING" || status === "PROCESSING") await new Promise((r) => setTimeout(r, 25));
      }
      statuses.push(status);
    }
    return statuses;
  }
});

/** The migration of a database that holds `double precision` money and 32-bit ids. */
const postgresUrl = (() => {
  const url = serviceUrl("DATABASE_URL");
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

const migrationBackends: Array<{ name: string; open(): Promise<{ db: Db; drop(): Promise<void> }> }> = [
  {
    name: "SQLite",
    open: async () => {
      const db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
      return { db, drop: () => db.close() };
    },
  },
  ...(postgresUrl
    ? [
        {
          name: "PostgreSQL",
          open: async () => {
            const url = postgresUrl;
            const schema = `svc_test_${process.pid}_${randomBytes(4).toString("hex")}`;
            const admin = new pg.Client({ connectionString: url });
            await admin.connect();
            await admin.query(`create schema ${schema}`);
            await admin.end();
            const db = createDatabase({ kind: "postgres", url, schema });
            return {
              db,
              async drop() {
                await db.close();
                const dropper = new pg.Client({ connectionString: url });
                await dropper.connect();
                await dropper.query(`drop schema if exists ${schema} cascade`);
                await dropper.end();
              },
            };
          },
        },
      ]
    : []),
];

describe.each(migrationBackends)("migration 0003 on $name", (backend) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await backend.open());
  });
  afterAll(() => drop());

  it("double-precision balances, prices and transfers → integer minor units, ids go on past 2^31", async () => {
    const { error } = await migrator(db).migrateTo("0002_soap_events_notifications");
    expect(error).toBeUndefined();
    const k = db.kysely;
    const at = new Date().toISOString();
    await k.insertInto("categories").values({ name: "C", description: "" }).execute();
    await k
      .insertInto("products")
      .values({ name: "P", sku: "P-1", category_id: 1, price: 0.1 + 0.2, stock: 1, updated_at: at })
      .execute();
    await k
      .insertInto("accounts")
      .values([
        { number: "A", owner: "a", balance: 1000000 - 1e-9, currency: "EUR", updated_at: at },
        { number: "B", owner: "b", balance: 1e-9 + 0.125, currency: "EUR", updated_at: at },
        { number: "C", owner: "c", balance: 1234.4, currency: "JPY", updated_at: at },
      ])
      .execute();
    await k
      .insertInto("transfers")
      .values({
        from_account_id: 3,
        to_account_id: 3,
        amount: 7,
        status: "COMPLETED",
        failure_reason: null,
        created_at: at,
        completed_at: at,
      })
      .execute();
    await k
      .insertInto("customers")
      .values({ id: 2147483647, name: "Top", email: "t@x.example", city: "" })
      .execute();

    await migrate(db);

    const price = await k.selectFrom("products").select("price").executeTakeFirstOrThrow();
    expect(price.price).toBe(30);
    const balances = await k.selectFrom("accounts").select(["number", "balance"]).orderBy("id").execute();
    // Half away from zero to the cent (JPY: to the yen).
    expect(balances).toEqual([
      { number: "A", balance: 100000000 },
      { number: "B", balance: 13 },
      { number: "C", balance: 1234 },
    ]);
    const t = await k.selectFrom("transfers").select("amount").executeTakeFirstOrThrow();
    expect(t.amount).toBe(7);
    // A customer id past the old 32-bit end is stored and read back exactly.
    await k
      .insertInto("customers")
      .values({ id: 9223372036854775807n, name: "Max", email: "m@x.example", city: "" })
      .execute();
    const max = await k
      .selectFrom("customers")
      .select("id")
      .where("id", "=", 9223372036854775807n)
      .executeTakeFirstOrThrow();
    expect(max.id).toBe(9223372036854775807n);
    const next = await k.selectFrom("id_allocations").select("next_id").executeTakeFirstOrThrow();
    expect(next.next_id).toBe(2147483648);
  });
});
