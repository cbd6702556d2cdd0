import { crawlLinks } from "@svc/hal/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, READER, type Started } from "./harness.js";

type Doc = Record<string, unknown> & { _links: Record<string, { href: string }> };
type Page = { _embedded: Record<string, Doc[]>; page: { totalElements: number } };

const ROUTES = [
  "/",
  "/employees",
  "/employees/:id",
  "/v2/employees",
  "/v2/employees/:id",
  "/employees/:id/projects",
  "/v2/employees/:id/projects",
  "/departments",
  "/departments/:id",
  "/projects",
  "/projects/:id",
  "/products",
  "/products/:id",
  "/products/:id/reviews",
  "/products/:id/reviews/:rid",
  "/categories",
  "/categories/:id",
  "/orders",
  "/orders/:id",
  "/orders/:id/items",
  "/orders/:id/items/:iid",
  "/orders/:id/tracking",
  "/orders/:id/invoice",
  "/payments",
  "/payments/:id",
  "/cart",
  "/cart/items/:productId",
  "/users",
  "/users/:id",
  "/users/:id/orders",
  "/accounts",
  "/accounts/:id",
  "/transfers",
  "/transfers/:id",
  "/customers",
  "/customers/:id",
  "/customers/:id/orders",
  "/events",
  "/events/:id",
  "/notifications",
  "/notifications/:id",
];

describe.each(backends)("the other collections on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  const key = () => `k-${Math.random().toString(36).slice(2)}`;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it.each([
    "/departments",
    "/projects",
    "/products",
    "/categories",
    "/orders",
    "/payments",
    "/users",
    "/accounts",
    "/transfers",
    "/customers",
    "/customers/1/orders",
    "/orders/1/items",
    "/products/1/reviews",
    "/users/1/orders",
    "/employees/1/projects",
  ])("GET %s → 200, a non-empty page whose items have self links that resolve", async (path) => {
    const res = await api(path);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    const items = Object.values(page._embedded)[0] ?? [];
    expect(items.length).toBeGreaterThan(0);
    const self = items[0]?._links.self?.href ?? "";
    expect((await api(new URL(self).pathname)).status).toBe(200);
  });

  it.each([
    "/customers/999999/orders",
    "/products/999999/reviews",
    "/orders/999999/items",
    "/orders/999999/invoice",
  ])("GET %s → 404", async (path) => {
    expect((await api(path)).status).toBe(404);
  });

  it("orders carry links by state: PAID → payment, invoice, cancel; SHIPPED → tracking, invoice", async () => {
    const paid = (await (await api("/orders?status=PAID&size=1")).json()) as Page;
    const shipped = (await (await api("/orders?status=SHIPPED&size=1")).json()) as Page;
    const p = paid._embedded.orders?.[0] as Doc;
    const sh = shipped._embedded.orders?.[0] as Doc;
    expect(Object.keys(p._links)).toEqual(expect.arrayContaining(["self", "payment", "invoice", "cancel"]));
    expect(p._links).not.toHaveProperty("tracking");
    expect(Object.keys(sh._links)).toEqual(expect.arrayContaining(["self", "tracking", "invoice"]));
    expect(sh._links).not.toHaveProperty("cancel");
    expect((await api(new URL(sh._links.tracking?.href ?? "").pathname)).status).toBe(200);
    expect((await api(`/orders/${p.id}/tracking`)).status).toBe(404);
  });

  it("order life cycle: POST /orders → PENDING, POST /payments → PAID, PATCH SHIPPED, illegal change → 422", async () => {
    const created = await api("/orders", {
      method: "POST",
      json: {
        customerId: 1,
        items: [
          { productId: 1, quantity: 1 },
          { productId: 2, quantity: 2 },
        ],
      },
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as Doc & { id: number; total: number; status: string };
    expect(order.status).toBe("PENDING");
    const wrong = await api("/payments", {
      method: "POST",
      headers: { "idempotency-key": key() },
      json: { orderId: order.id, amount: order.total + 1, method: "card" },
    });
    expect(wrong.status).toBe(422);
    const payment = await api("/payments", {
      method: "POST",
      headers: { "idempotency-key": key() },
      json: { orderId: order.id, amount: order.total, method: "card" },
    });
    expect(payment.status).toBe(201);
    expect(payment.headers.get("location")).toMatch(/\/payments\/\d+$/);
    const again = await api("/payments", {
      method: "POST",
      headers: { "idempotency-key": key() },
      json: { orderId: order.id, amount: order.total, method: "card" },
    });
    expect(again.status).toBe(409);
    const paid = (await (await api(`/orders/${order.id}`)).json()) as Doc;
    expect(paid.status).toBe("PAID");
    expect(paid._links).toHaveProperty("payment");
    const missing = await api(`/orders/${order.id}`, { method: "PATCH", json: { status: "SHIPPED" } });
    expect(missing.status).toBe(422);
    const shipped = await api(`/orders/${order.id}`, {
      method: "PATCH",
      json: { status: "SHIPPED", carrier: "UPS", trackingNumber: "1Z999" },
    });
    expect(shipped.status).toBe(200);
    expect(
      (await api(`/orders/${order.id}`, { method: "PATCH", json: { status: "CANCELLED" } })).status,
    ).toBe(422);
    const invoice = (await (await api(`/orders/${order.id}/invoice`)).json()) as {
      total: number;
      lines: unknown[];
    };
    expect(invoice.total).toBe(order.total);
    expect(invoice.lines).toHaveLength(2);
  });

  it("POST /orders with an unknown product → 422; with no items → 400", async () => {
    const unknown = await api("/orders", {
      method: "POST",
      json: { customerId: 1, items: [{ productId: 99999, quantity: 1 }] },
    });
    expect(unknown.status).toBe(422);
    expect((await api("/orders", { method: "POST", json: { customerId: 1, items: [] } })).status).toBe(400);
  });

  it("POST /transfers → 202 + Location of a status resource that later shows COMPLETED, balances moved", async () => {
    const before = (await (await api("/accounts/1")).json()) as { balance: number };
    const res = await api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": key() },
      json: { fromAccountId: 1, toAccountId: 2, amount: 10 },
    });
    expect(res.status).toBe(202);
    const location = new URL(res.headers.get("location") ?? "").pathname;
    expect(location).toMatch(/^\/transfers\/\d+$/);
    let status = "PENDING";
    for (let i = 0; i < 50 && (status === "PENDING" || status === "PROCESSING"); i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = ((await (await api(location)).json()) as { status: string }).status;
    }
    expect(status).toBe("COMPLETED");
    const after = (await (await api("/accounts/1")).json()) as { balance: number };
    expect(after.balance).toBeCloseTo(before.balance - 10);
  });

  it("a transfer above the balance is accepted, then FAILED with the reason", async () => {
    const res = await api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": key() },
      json: { fromAccountId: 2, toAccountId: 3, amount: 10_000_000 },
    });
    expect(res.status).toBe(202);
    const location = new URL(res.headers.get("location") ?? "").pathname;
    let body = { status: "PENDING", failureReason: null as string | null };
    for (let i = 0; i < 50 && (body.status === "PENDING" || body.status === "PROCESSING"); i++) {
      await new Promise((r) => setTimeout(r, 20));
      body = (await (await api(location)).json()) as typeof body;
    }
    expect(body).toMatchObject({ status: "FAILED", failureReason: "insufficient funds" });
  });

  it("POST /transfers with amount ≤ 0 or one account twice → 422", async () => {
    for (const json of [
      { fromAccountId: 1, toAccountId: 2, amount: 0 },
      { fromAccountId: 1, toAccountId: 1, amount: 5 },
      { fromAccountId: 1, toAccountId: 9999, amount: 5 },
    ]) {
      const res = await api("/transfers", { method: "POST", headers: { "idempotency-key": key() }, json });
      expect(res.status).toBe(422);
    }
  });

  it("the cart belongs to the caller: PUT replaces it, DELETE empties it", async () => {
    const put = await api("/cart", { method: "PUT", json: { items: [{ productId: 2, quantity: 3 }] } });
    expect(put.status).toBe(200);
    const cart = (await put.json()) as {
      owner: string;
      items: Array<{ productId: number; quantity: number }>;
    };
    expect(cart.owner).toBe("admin");
    expect(cart.items).toEqual([expect.objectContaining({ productId: 2, quantity: 3 })]);
    expect((await api("/cart", { method: "DELETE" })).status).toBe(204);
    expect(((await (await api("/cart")).json()) as { items: unknown[] }).items).toEqual([]);
    expect(
      (await api("/cart", { method: "PUT", json: { items: [{ productId: 99999, quantity: 1 }] } })).status,
    ).toBe(422);
  });

  it("GET /cart/items/{productId} (each line's self) → 200 with the line as the cart shows it, private, no-cache, with an ETag", async () => {
    const put = await api("/cart", {
      method: "PUT",
      json: {
        items: [
          { productId: 3, quantity: 2 },
          { productId: 1, quantity: 5 },
        ],
      },
    });
    expect(put.status).toBe(200);
    const cart = (await (await api("/cart")).json()) as { items: Doc[] };
    expect(cart.items.map((i) => i._links.self?.href)).toEqual([
      `${s.url}/cart/items/3`,
      `${s.url}/cart/items/1`,
    ]);
    for (const item of cart.items) {
      const path = new URL(item._links.self?.href ?? "").pathname;
      const res = await api(path);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get("cache-control")).toBe("private, no-cache");
      expect(await res.json()).toEqual(item);
      const etag = res.headers.get("etag") ?? "";
      expect(etag).not.toBe("");
      expect((await api(path, { headers: { "if-none-match": etag } })).status).toBe(304);
    }
    const xml = await api("/cart/items/3", { headers: { accept: "application/xml" } });
    expect(xml.status).toBe(200);
    expect(xml.headers.get("content-type")).toMatch(/^application\/xml/);
    expect(await xml.text()).toContain("<quantity>2</quantity>");
  });

  it("GET /cart/items/{productId} of a product not in the caller's cart, or of another user's line → 404", async () => {
    await api("/cart", { method: "PUT", json: { items: [{ productId: 3, quantity: 2 }] } });
    expect((await api("/cart/items/3")).status).toBe(200);
    for (const path of ["/cart/items/2", "/cart/items/999999", "/cart/items/0", "/cart/items/x"])
      expect([path, (await api(path)).status]).toEqual([path, 404]);
    // The reader's cart is its own: admin's line for product 3 is not there.
    expect((await api("/cart/items/3", { headers: { authorization: READER } })).status).toBe(404);
    const emptied = await api("/cart", { method: "DELETE" });
    expect(emptied.status).toBe(204);
    expect((await api("/cart/items/3")).status).toBe(404);
  });

  it.each(["PUT", "DELETE", "PATCH", "POST"])(
    "%s /cart/items/{productId} → 405 with Allow: GET, HEAD, OPTIONS",
    async (method) => {
      await api("/cart", { method: "PUT", json: { items: [{ productId: 3, quantity: 2 }] } });
      const res = await api("/cart/items/3", { method, json: { quantity: 1 } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect((await api("/cart/items/3")).status).toBe(200);
    },
  );

  it("POST /products/1/reviews → 201; rating 6 → 400", async () => {
    const ok = await api("/products/1/reviews", {
      method: "POST",
      json: { author: "kim", rating: 5, comment: "ok" },
    });
    expect(ok.status).toBe(201);
    expect(ok.headers.get("location")).toMatch(/\/products\/1\/reviews\/\d+$/);
    const bad = await api("/products/1/reviews", {
      method: "POST",
      json: { author: "kim", rating: 6, comment: "" },
    });
    expect(bad.status).toBe(400);
  });

  it("PUT /users/{id} without customerId replaces the user: the customer link is gone; PATCH keeps it", async () => {
    const created = await api("/users", {
      method: "POST",
      json: { username: "put.replaces", email: "put.replaces@example.com", role: "customer", customerId: 2 },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const patched = await api(`/users/${id}`, { method: "PATCH", json: { role: "admin" } });
    expect(((await patched.json()) as { customerId: unknown }).customerId).toBe(2);
    // RFC 9110 §9.3.4: the state becomes the one enclosed, which names no customer.
    const put = await api(`/users/${id}`, {
      method: "PUT",
      json: { username: "put.replaces", email: "put.replaces@example.com", role: "customer" },
    });
    expect(put.status).toBe(200);
    const user = (await put.json()) as { customerId: unknown; _links: Record<string, unknown> };
    expect(user.customerId).toBeNull();
    expect(user._links.customer).toBeUndefined();
    expect(((await (await api(`/users/${id}`)).json()) as { customerId: unknown }).customerId).toBeNull();
  });

  it("DELETE /departments/1 (still has employees) → 409; POST a duplicate category → 409", async () => {
    expect((await api("/departments/1", { method: "DELETE" })).status).toBe(409);
    expect(
      (await api("/categories", { method: "POST", json: { name: "Books", description: "" } })).status,
    ).toBe(409);
  });

  it("every path of /openapi.json exists: GET answers 2xx and OPTIONS allows each documented method", async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths).length).toBeGreaterThan(30);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/events", "/events/{id}", "/notifications", "/notifications/{id}"]),
    );
    for (const [template, ops] of Object.entries(doc.paths)) {
      let path = template.replace(/\{\w+\}/g, "2");
      if (template === "/cart/items/{productId}") {
        // The caller's own line: one must be in the cart, which an earlier test may have emptied.
        await api("/cart", { method: "PUT", json: { items: [{ productId: 2, quantity: 1 }] } });
      }
      if (/\{\w+\}\/[\w-]+\/\{\w+\}$/.test(template)) {
        // A nested item: take a real id from its collection.
        const list = path.slice(0, path.lastIndexOf("/"));
        const page = (await (await api(list)).json()) as Page;
        const first = Object.values(page._embedded)[0]?.[0];
        path = `${list}/${String(first?.id)}`;
      }
      if (ops.get) expect([path, (await api(path)).status]).toEqual([path, 200]);
      if (
        path.startsWith("/auth") ||
        path.startsWith("/.well-known") ||
        path === "/health" ||
        path === "/ready"
      )
        continue;
      if (path === "/") continue;
      const allow = (await api(path, { method: "OPTIONS" })).headers.get("allow") ?? "";
      for (const method of Object.keys(ops))
        expect([path, allow]).toEqual([path, expect.stringContaining(method.toUpperCase())]);
    }
  });

  it("the HAL crawler finds no broken, undeclared or self-less link from the API root", async () => {
    const report = await crawlLinks(s.url, "/", {
      headers: { authorization: `Basic ${Buffer.from("admin:admin").toString("base64")}` },
      allowedRoutes: ROUTES,
      maxRequests: 1500,
    });
    expect(report.broken).toEqual([]);
    expect(report.undeclared).toEqual([]);
    expect(report.missingSelf).toEqual([]);
    expect(report.truncated).toBe(false);
    expect(report.visited.length).toBeGreaterThan(100);
    // Several hundred requests, one after another: on a machine busy with the other suites they
    // have taken longer than the default 20 s.
  }, 90_000);
});
