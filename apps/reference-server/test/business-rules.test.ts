import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

type Doc = Record<string, unknown> & { id: number };

describe.each(backends)("business rules on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  /** A product at the largest price the API accepts, with enough stock for any order. */
  async function dearProduct(sku: string): Promise<number> {
    const res = await api("/products", {
      method: "POST",
      json: { name: "Gold", sku, categoryId: 1, price: 999999999999.99, stock: 100000 },
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as Doc).id;
  }

  it("POST /orders whose total exceeds 10^12 EUR (no payment could settle it) → 422, no order", async () => {
    const productId = await dearProduct("GOLD-ORDER");
    const before = (await (await api("/orders?size=1")).json()) as { page: { totalElements: number } };
    const res = await api("/orders", {
      method: "POST",
      json: { customerId: 1, items: [{ productId, quantity: 1000 }] },
    });
    // 999999999999.99 × 1000 is 99999999999999000 cents, past 2^53: the total was inexact
    // (999999999999990.1) and above what POST /payments accepts, so the order could never be paid.
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: Array<{ field: string }> };
    expect(body.errors[0]?.field).toBe("items");
    const after = (await (await api("/orders?size=1")).json()) as { page: { totalElements: number } };
    expect(after.page.totalElements).toBe(before.page.totalElements);
  });

  it("POST /orders at exactly 10^12 EUR is accepted and payable: the total is exact", async () => {
    const res = await api("/products", {
      method: "POST",
      json: { name: "Round", sku: "ROUND-1", categoryId: 1, price: 1e9, stock: 5000 },
    });
    const productId = ((await res.json()) as Doc).id;
    const order = await api("/orders", {
      method: "POST",
      json: { customerId: 1, items: [{ productId, quantity: 1000 }] },
    });
    expect(order.status).toBe(201);
    const o = (await order.json()) as Doc & { total: number };
    expect(o.total).toBe(1e12);
    const paid = await api("/payments", {
      method: "POST",
      headers: { "idempotency-key": `k-${Math.random().toString(36).slice(2)}` },
      json: { orderId: o.id, amount: o.total, method: "card" },
    });
    expect(paid.status).toBe(201);
  });

  it("PUT /cart whose total exceeds 10^12 EUR → 422, the cart unchanged", async () => {
    const productId = await dearProduct("GOLD-CART");
    const before = await (await api("/cart")).json();
    const res = await api("/cart", {
      method: "PUT",
      json: { items: [{ productId, quantity: 1000 }] },
    });
    expect(res.status).toBe(422);
    expect(await (await api("/cart")).json()).toEqual(before);
  });
  it("PATCH managerId that closes a cycle (1 manages 2 manages 3 manages 1) → 422, unchanged", async () => {
    const patch = (id: number, managerId: number | null) =>
      api(`/employees/${id}`, { method: "PATCH", json: { managerId } });
    expect((await patch(2, 1)).status).toBe(200);
    expect((await patch(3, 2)).status).toBe(200);
    // Direct cycle: 1 would be managed by 2, whom 1 manages.
    const direct = await patch(1, 2);
    expect(direct.status).toBe(422);
    expect(((await direct.json()) as { errors: Array<{ field: string }> }).errors[0]?.field).toBe(
      "managerId",
    );
    // Through a chain: 1 would be managed by 3, managed by 2, managed by 1.
    expect((await patch(1, 3)).status).toBe(422);
    const one = (await (await api("/employees/1")).json()) as { managerId: number | null };
    expect(one.managerId).toBeNull();
    // PUT takes the same rule.
    const full = (await (await api("/employees/1")).json()) as Record<string, unknown>;
    const { _links, id, ...rest } = full;
    const put = await api("/employees/1", { method: "PUT", json: { ...rest, managerId: 3 } });
    expect(put.status).toBe(422);
    // A chain that does not come back is fine, and undoing it too.
    expect((await patch(3, null)).status).toBe(200);
    expect((await patch(1, 3)).status).toBe(200);
    expect((await patch(1, null)).status).toBe(200);
    expect((await patch(2, null)).status).toBe(200);
  });
  it("a transfer whose processing hits a database failure is not left PROCESSING: it completes on a retry", async () => {
    const before = (await (await api("/accounts/3")).json()) as { balance: number };
    // The background processing's transaction fails, as a dropped connection, a pool time-out or
    // a deadlock victim would. The POST's own transaction (the transfer with its Idempotency-Key's
    // outcome) comes first and goes through.
    const kysely = s.service.db.kysely;
    const transaction = kysely.transaction;
    let failures = 0;
    let pass = 1;
    kysely.transaction = () => {
      if (pass-- > 0) return transaction.call(kysely);
      kysely.transaction = transaction;
      failures++;
      return {
        execute: () => Promise.reject(new Error("Connection terminated unexpectedly")),
      } as unknown as ReturnType<typeof transaction>;
    };
    const res = await api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": `k-${Math.random().toString(36).slice(2)}` },
      json: { fromAccountId: 3, toAccountId: 4, amount: 7 },
    });
    expect(res.status).toBe(202);
    const location = new URL(res.headers.get("location") ?? "").pathname;
    let status = "PENDING";
    for (let i = 0; i < 200 && (status === "PENDING" || status === "PROCESSING"); i++) {
      await new Promise((r) => setTimeout(r, 25));
      status = ((await (await api(location)).json()) as { status: string }).status;
    }
    kysely.transaction = transaction;
    expect(failures).toBe(1);
    expect(status).toBe("COMPLETED");
    const after = (await (await api("/accounts/3")).json()) as { balance: number };
    expect(after.balance).toBeCloseTo(before.balance - 7);
  });
  it("POST /orders takes the stock it orders: a second order past what is left → 422; cancelling gives it back", async () => {
    const res = await api("/products", {
      method: "POST",
      json: { name: "Rare", sku: "RARE-1", categoryId: 1, price: 3, stock: 5 },
    });
    const productId = ((await res.json()) as Doc).id;
    const order = (quantity: number) =>
      api("/orders", { method: "POST", json: { customerId: 1, items: [{ productId, quantity }] } });
    const stock = async () =>
      ((await (await api(`/products/${productId}`)).json()) as { stock: number }).stock;
    const first = await order(4);
    expect(first.status).toBe(201);
    expect(await stock()).toBe(1);
    // Only 1 left: ordering 4 more oversold the product.
    const second = await order(4);
    expect(second.status).toBe(422);
    expect(await stock()).toBe(1);
    const id = ((await first.json()) as Doc).id;
    const cancelled = await api(`/orders/${id}`, { method: "PATCH", json: { status: "CANCELLED" } });
    expect(cancelled.status).toBe(200);
    expect(await stock()).toBe(5);
    expect((await order(4)).status).toBe(201);
  });

  it("cancelling an order whose stock would push the product past 2147483647 (its largest stock) → 409, nothing changed", async () => {
    const res = await api("/products", {
      method: "POST",
      json: { name: "Brim", sku: "BRIM-1", categoryId: 1, price: 1, stock: 10 },
    });
    const productId = ((await res.json()) as Doc).id;
    const placed = await api("/orders", {
      method: "POST",
      json: { customerId: 1, items: [{ productId, quantity: 5 }] },
    });
    const orderId = ((await placed.json()) as Doc).id;
    const full = await api(`/products/${productId}`, { method: "PATCH", json: { stock: 2147483647 } });
    expect(full.status).toBe(200);
    // PostgreSQL's integer column overflowed (500); SQLite stored 2147483652, a stock the product's
    // own schema refuses, so the product could no longer be written back as read.
    const cancelled = await api(`/orders/${orderId}`, { method: "PATCH", json: { status: "CANCELLED" } });
    expect(cancelled.status).toBe(409);
    expect(((await cancelled.json()) as { status: number }).status).toBe(409);
    const order = (await (await api(`/orders/${orderId}`)).json()) as { status: string };
    expect(order.status).toBe("PENDING");
    const product = (await (await api(`/products/${productId}`)).json()) as { stock: number };
    expect(product.stock).toBe(2147483647);
  });

  it("30 concurrent orders naming two products in opposite orders, 10 cancellations among them → every one succeeds, stock exact", async () => {
    const product = async (sku: string) => {
      const res = await api("/products", {
        method: "POST",
        json: { name: sku, sku, categoryId: 1, price: 1, stock: 1000 },
      });
      return ((await res.json()) as Doc).id;
    };
    const a = await product("LOCK-A");
    const b = await product("LOCK-B");
    const lines = (n: number) =>
      n % 2 === 0
        ? [
            { productId: a, quantity: 1 },
            { productId: b, quantity: 1 },
          ]
        : [
            { productId: b, quantity: 1 },
            { productId: a, quantity: 1 },
          ];
    const order = (n: number) => api("/orders", { method: "POST", json: { customerId: 1, items: lines(n) } });
    const placed: number[] = [];
    for (let n = 0; n < 10; n++) placed.push(((await (await order(n)).json()) as Doc).id);
    // PostgreSQL locks each product row a transaction takes stock from (or gives it back to) until
    // commit: two transactions that lock A then B, and B then A, deadlock, and one of them fails.
    const statuses = await Promise.all([
      ...Array.from({ length: 30 }, (_, n) => order(n).then((r) => r.status)),
      ...placed.map((id) =>
        api(`/orders/${id}`, { method: "PATCH", json: { status: "CANCELLED" } }).then((r) => r.status),
      ),
    ]);
    expect(statuses.filter((s) => s !== 201 && s !== 200)).toEqual([]);
    for (const id of [a, b]) {
      const p = (await (await api(`/products/${id}`)).json()) as { stock: number };
      expect(p.stock).toBe(1000 - 30);
    }
  });

  it.each([
    ["a number", 5],
    ["null", null],
    ["a boolean", true],
  ])(
    "POST /departments with name as %s → 400 that says the type is wrong, not that name is missing",
    async (_, name) => {
      const res = await api("/departments", { method: "POST", json: { name, city: "Rome" } });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: Array<{ field: string; message: string }> };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]?.field).toBe("name");
      expect(body.errors[0]?.message).not.toBe("is required");
      expect(body.errors[0]?.message).toMatch(/string/);
    },
  );

  it("POST /departments without name → 400 name is required", async () => {
    const res = await api("/departments", { method: "POST", json: { city: "Rome" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: Array<{ field: string; message: string }> };
    expect(body.errors).toEqual([{ field: "name", message: "is required" }]);
  });
});
