import { HttpError } from "@svc/errors";
import { Rel } from "@svc/hal";
import { reply } from "@svc/kernel";
import { commitKeyIn, writtenAt } from "../commit-key.js";
import type { Db } from "../db/database.js";
import { type LooseQuery, loose } from "../db/query.js";
import { invoicePdf } from "../documents/invoice-pdf.js";
import { qrCodes } from "../documents/qr.js";
import { hrefs } from "../links.js";
import { parseAssignedId, validate } from "../request.js";
import { INT_MAX, MONEY_MAX, OrderInput, OrderPatch, PaymentInput } from "../schemas.js";
import type { RequestView, Routes } from "../view.js";
import { cents, eur, mustExist, rule } from "./catalogue.js";
import { type CrudResource, type Ctx, resourceView } from "./crud.js";

function orderBase(db: Db): LooseQuery {
  return loose(db)
    .selectFrom("orders as t")
    .leftJoin("payments as p", "p.order_id", "t.id")
    .selectAll("t")
    .select("p.id as payment_id");
}

/**
 * An order with the links its state allows: PAID → payment, invoice, cancel; SHIPPED → tracking,
 * invoice. `cancel` points at the order itself: cancelling is `PATCH {"status":"CANCELLED"}`.
 */
function orderView(r: Record<string, unknown>, { href }: Ctx): Record<string, unknown> {
  const self = href(`/orders/${r.id}`);
  const links: Record<string, string | undefined> = {
    customer: href(`/customers/${r.customer_id}`),
    items: href(`/orders/${r.id}/items`),
  };
  if (r.status === "PAID") {
    links[Rel.PAYMENT] = r.payment_id == null ? undefined : href(`/payments/${r.payment_id}`);
    links[Rel.INVOICE] = href(`/orders/${r.id}/invoice`);
    links[Rel.CANCEL] = self;
  } else if (r.status === "SHIPPED") {
    links[Rel.TRACKING] = href(`/orders/${r.id}/tracking`);
    links[Rel.INVOICE] = href(`/orders/${r.id}/invoice`);
  } else if (r.status === "PENDING") {
    links[Rel.CANCEL] = self;
  }
  return resourceView(
    {
      id: Number(r.id),
      status: r.status,
      customerId: r.customer_id,
      total: eur(r.total),
      currency: r.currency,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    },
    self,
    links,
  );
}

const orderList = {
  filters: {
    status: { column: "t.status", match: "eq" as const },
    customerId: { column: "t.customer_id", match: "id" as const },
  },
  sort: { id: "t.id", total: "t.total", status: "t.status", createdAt: "t.created_at" },
};

async function createOrder(req: RequestView, ctx: Ctx) {
  const input = validate(OrderInput, req.body);
  const db = ctx.db;
  await mustExist(db, "customers", input.customerId, "customerId");
  const ids = [...new Set(input.items.map((i) => i.productId))];
  const found = await db.kysely
    .selectFrom("products")
    .select(["id", "price", "stock"])
    .where("id", "in", ids)
    .execute();
  const byId = new Map(found.map((p) => [p.id, p]));
  const lines = input.items.map((item, n) => {
    const product = byId.get(item.productId);
    if (!product) throw rule(`items.${n}.productId`, `${item.productId} does not exist`);
    if (item.quantity > product.stock)
      throw rule(`items.${n}.quantity`, `exceeds the stock of ${product.stock}`);
    return { product_id: item.productId, quantity: item.quantity, unit_price: Number(product.price) };
  });
  // Stock is taken in ascending product id, whatever order the client listed the items in: each
  // update locks its product's row until commit, and two orders locking the same products in
  // opposite orders would deadlock on PostgreSQL (one of them failing). A cancellation gives stock
  // back in the same order. Item numbers in messages keep the client's order.
  const takeOrder = [...lines.keys()].sort(
    (x, y) => (lines[x]?.product_id ?? 0) - (lines[y]?.product_id ?? 0),
  );
  // Prices are integer cents: the total is exact.
  const total = lines.reduce((s, l) => s + l.quantity * l.unit_price, 0);
  // An order is settled by one payment, whose amount is at most MONEY_MAX: a larger total could
  // never be paid, and past 2^53 cents it would not even be exact.
  if (total > cents(MONEY_MAX)) throw rule("items", `total more than ${MONEY_MAX} EUR, the largest payment`);
  const at = new Date().toISOString();
  const id = await db.kysely.transaction().execute(async (trx) => {
    // The order takes its items from the stock, in the transaction that records it, each on the
    // condition that enough is left: two orders for the last units cannot both succeed.
    for (const n of takeOrder) {
      const l = lines[n] as (typeof lines)[number];
      const taken = await trx
        .updateTable("products")
        .set((eb) => ({ stock: eb("stock", "-", l.quantity), updated_at: at }))
        .where("id", "=", l.product_id)
        .where("stock", ">=", l.quantity)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1)
        throw rule(`items.${n}.quantity`, "exceeds the stock left of the product");
    }
    const order = await trx
      .insertInto("orders")
      .values({
        customer_id: input.customerId,
        status: "PENDING",
        total,
        currency: "EUR",
        carrier: null,
        tracking_number: null,
        created_at: at,
        updated_at: at,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await trx
      .insertInto("order_items")
      .values(lines.map((l) => ({ ...l, order_id: order.id })))
      .execute();
    await commitKeyIn(trx, ctx.context?.claim, writtenAt(201, ctx.href(`/orders/${order.id}`)));
    return order.id;
  });
  return reply(await ctx.show(id), { status: 201, headers: { Location: ctx.href(`/orders/${id}`) } });
}

/** The order life cycle: PENDING → PAID (by a payment) → SHIPPED; PENDING or PAID → CANCELLED. */
const TRANSITIONS: Readonly<Record<string, readonly string[]>> = {
  PENDING: ["CANCELLED"],
  PAID: ["SHIPPED", "CANCELLED"],
  SHIPPED: [],
  CANCELLED: [],
};

async function patchOrder(req: RequestView, ctx: Ctx) {
  const input = validate(OrderPatch, req.body);
  const id = parseAssignedId(req.params.id, "order");
  const order = await ctx.db.kysely.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst();
  if (!order) throw HttpError.notFound(`Order ${id} does not exist`);
  if (!TRANSITIONS[order.status]?.includes(input.status)) {
    throw rule("status", `cannot change from ${order.status} to ${input.status}`);
  }
  if (input.status === "SHIPPED" && (!input.carrier || !input.trackingNumber)) {
    throw rule("trackingNumber", "and carrier are required to ship an order");
  }
  const at = new Date().toISOString();
  await ctx.db.kysely.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable("orders")
      .set({
        status: input.status,
        carrier: input.carrier ?? order.carrier,
        tracking_number: input.trackingNumber ?? order.tracking_number,
        updated_at: at,
      })
      .where("id", "=", id)
      .where("status", "=", order.status)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1)
      throw HttpError.conflict("The order changed meanwhile; read it again");
    if (input.status !== "CANCELLED") return;
    // A cancelled order gives back the stock it took when it was placed.
    // In ascending product id, as createOrder takes it (one lock order: no deadlock).
    const items = await trx
      .selectFrom("order_items")
      .select(["product_id", "quantity"])
      .where("order_id", "=", id)
      .orderBy("product_id")
      .orderBy("id")
      .execute();
    for (const item of items) {
      // Only while the stock stays within its 32-bit column (and the product schema's maximum):
      // past it PostgreSQL fails the update and SQLite would store a stock no write may set. The
      // throw rolls back the whole cancellation.
      const given = await trx
        .updateTable("products")
        .set((eb) => ({ stock: eb("stock", "+", item.quantity), updated_at: at }))
        .where("id", "=", item.product_id)
        .where("stock", "<=", INT_MAX - item.quantity)
        .executeTakeFirst();
      if (Number(given.numUpdatedRows) !== 1) {
        throw HttpError.conflict(
          `Cancelling would raise the stock of product ${item.product_id} past ${INT_MAX}, the largest stock`,
        );
      }
    }
  });
  return ctx.show(id);
}

export const orders: CrudResource = {
  path: "/orders",
  collection: "orders",
  noun: "Order",
  table: "orders",
  base: orderBase,
  list: orderList,
  view: orderView,
  writes: ["POST", "PATCH"],
  handlers: { POST: createOrder, PATCH: patchOrder },
};

export const customerOrders: CrudResource = {
  itemRoute: false,
  path: "/customers/:parentId/orders",
  collection: "orders",
  noun: "Order",
  table: "orders",
  parent: { table: "customers", noun: "Customer" },
  base: (db, ctx) => orderBase(db).where("t.customer_id", "=", ctx.parentId),
  list: { filters: { status: orderList.filters.status }, sort: orderList.sort },
  view: orderView,
};

export const userOrders: CrudResource = {
  itemRoute: false,
  path: "/users/:parentId/orders",
  collection: "orders",
  noun: "Order",
  table: "orders",
  parent: { table: "users", noun: "User" },
  base: (db, ctx) =>
    orderBase(db).where(
      "t.customer_id",
      "in",
      loose(db).selectFrom("users").select("customer_id").where("id", "=", ctx.parentId),
    ),
  list: { filters: { status: orderList.filters.status }, sort: orderList.sort },
  view: orderView,
};

export const orderItems: CrudResource = {
  path: "/orders/:parentId/items",
  collection: "items",
  noun: "Item",
  table: "order_items",
  parent: { table: "orders", noun: "Order" },
  base: (db, ctx) =>
    loose(db)
      .selectFrom("order_items as t")
      .innerJoin("products as pr", "pr.id", "t.product_id")
      .selectAll("t")
      .select(["pr.name as product_name", "pr.sku as sku"])
      .where("t.order_id", "=", ctx.parentId),
  list: {
    filters: { productId: { column: "t.product_id", match: "id" } },
    sort: { id: "t.id", quantity: "t.quantity" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: Number(r.id),
        orderId: Number(r.order_id),
        productId: Number(r.product_id),
        productName: r.product_name,
        sku: r.sku,
        quantity: Number(r.quantity),
        unitPrice: eur(r.unit_price),
      },
      href(`/orders/${r.order_id}/items/${r.id}`),
      { order: href(`/orders/${r.order_id}`), product: href(`/products/${r.product_id}`) },
    ),
};

async function createPayment(req: RequestView, ctx: Ctx) {
  const input = validate(PaymentInput, req.body);
  const order = await ctx.db.kysely
    .selectFrom("orders")
    .selectAll()
    .where("id", "=", input.orderId)
    .executeTakeFirst();
  if (!order) throw rule("orderId", `${input.orderId} does not exist`);
  if (order.status !== "PENDING")
    throw HttpError.conflict(`Order ${order.id} is ${order.status}, not awaiting payment`);
  const amount = cents(input.amount);
  if (amount !== Number(order.total)) {
    throw rule("amount", `must equal the order total of ${eur(order.total)} ${order.currency}`);
  }
  const at = new Date().toISOString();
  const id = await ctx.db.kysely.transaction().execute(async (trx) => {
    const moved = await trx
      .updateTable("orders")
      .set({ status: "PAID", updated_at: at })
      .where("id", "=", order.id)
      .where("status", "=", "PENDING")
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) throw HttpError.conflict(`Order ${order.id} was paid meanwhile`);
    const payment = await trx
      .insertInto("payments")
      .values({ order_id: order.id, amount, method: input.method, created_at: at })
      .returning("id")
      .executeTakeFirstOrThrow();
    await commitKeyIn(trx, ctx.context?.claim, writtenAt(201, ctx.href(`/payments/${payment.id}`)));
    return payment.id;
  });
  return reply(await ctx.show(id), { status: 201, headers: { Location: ctx.href(`/payments/${id}`) } });
}

export const payments: CrudResource = {
  path: "/payments",
  collection: "payments",
  noun: "Payment",
  table: "payments",
  base: (db) => loose(db).selectFrom("payments as t").selectAll("t"),
  list: {
    filters: { orderId: { column: "t.order_id", match: "id" }, method: { column: "t.method", match: "eq" } },
    sort: { id: "t.id", amount: "t.amount", createdAt: "t.created_at" },
  },
  view: (r, { href }) =>
    resourceView(
      {
        id: Number(r.id),
        orderId: Number(r.order_id),
        amount: eur(r.amount),
        method: r.method,
        createdAt: r.created_at,
      },
      href(`/payments/${r.id}`),
      { order: href(`/orders/${r.order_id}`) },
    ),
  writes: ["POST"],
  handlers: { POST: createPayment },
  cacheControl: "no-store",
};

/** `/orders/{id}/tracking` (SHIPPED orders) and `/orders/{id}/invoice` (PAID or SHIPPED orders). */
export function mountOrderDocuments(routes: Routes, db: Db): void {
  // Methods run behind the permission check, OPTIONS included; the others are 405 with Allow.
  const allow = ["GET", "HEAD", "OPTIONS"];
  async function load(req: RequestView, states: readonly string[], what: string) {
    const id = parseAssignedId(req.params.id, "order");
    const order = await db.kysely.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst();
    if (!order) throw HttpError.notFound(`Order ${id} does not exist`);
    if (!states.includes(order.status))
      throw HttpError.notFound(`Order ${id} is ${order.status} and has no ${what}`);
    return order;
  }
  routes({
    path: "/orders/:id/tracking",
    allow,
    handlers: {
      get: {
        handle: async (req) => {
          const order = await load(req, ["SHIPPED"], "tracking");
          const href = hrefs(req);
          const self = href(`/orders/${order.id}/tracking`);
          return reply(
            resourceView(
              {
                orderId: order.id,
                carrier: order.carrier,
                trackingNumber: order.tracking_number,
                shippedAt: order.updated_at,
              },
              self,
              { order: href(`/orders/${order.id}`) },
            ),
            { add: qrCodes(self) },
          );
        },
      },
    },
  });
  routes({
    path: "/orders/:id/invoice",
    allow,
    handlers: {
      get: {
        handle: async (req) => {
          const order = await load(req, ["PAID", "SHIPPED"], "invoice");
          const href = hrefs(req);
          const [customer, lines] = await Promise.all([
            db.kysely
              .selectFrom("customers")
              .selectAll()
              .where("id", "=", order.customer_id)
              .executeTakeFirst(),
            db.kysely
              .selectFrom("order_items as i")
              .innerJoin("products as p", "p.id", "i.product_id")
              .select(["p.name", "p.sku", "i.quantity", "i.unit_price"])
              .where("i.order_id", "=", order.id)
              .orderBy("i.id")
              .execute(),
          ]);
          // The invoice names the order's status and the customer's details, which change (PAID →
          // SHIPPED, a customer's PUT): a client's cache may keep it but must revalidate it with its
          // ETag each time (RFC 9111 §5.2.2.4), not serve it unchecked for an hour.
          return reply(
            resourceView(
              {
                invoiceNumber: `INV-${String(order.id).padStart(6, "0")}`,
                orderId: order.id,
                status: order.status,
                customer: customer
                  ? { id: customer.id, name: customer.name, email: customer.email, city: customer.city }
                  : null,
                lines: lines.map((l) => ({
                  product: l.name,
                  sku: l.sku,
                  quantity: l.quantity,
                  unitPrice: eur(l.unit_price),
                  amount: eur(l.quantity * Number(l.unit_price)),
                })),
                total: eur(order.total),
                currency: order.currency,
                issuedAt: order.created_at,
              },
              href(`/orders/${order.id}/invoice`),
              { order: href(`/orders/${order.id}`) },
            ),
            { add: [invoicePdf], headers: { "Cache-Control": "private, no-cache" } },
          );
        },
      },
    },
  });
}
