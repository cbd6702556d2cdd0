import { HttpError } from "@svc/errors";
import { reply } from "@svc/kernel";
import { type Kysely, sql } from "kysely";
import { commitKeyIn, writtenAt } from "../commit-key.js";
import type { Db } from "../db/database.js";
import { fromMinor, MAX_MINOR, minorDigits, SERVICE_CURRENCY, toMinor } from "../db/money.js";
import { loose } from "../db/query.js";
import type { Database } from "../db/schema.js";
import { type Href, hrefs } from "../links.js";
import { type Keys, NO_KEYS } from "../pipeline.js";
import { parseAssignedId, validate } from "../request.js";
import { CartInput, MONEY_MAX, TransferInput } from "../schemas.js";
import type { RequestView, Routes } from "../view.js";
import { cents, NO_STORE, rule } from "./catalogue.js";
import { type CrudResource, type Ctx, resourceView } from "./crud.js";

/** Background work the server must finish (or hand over) before it exits. */
export class Background {
  readonly #running = new Set<Promise<unknown>>();
  readonly #named = new Set<string>();
  readonly #failed: (err: unknown) => void;
  /** `failed` hears each task's error (the task itself is not retried: the sweep picks it up). */
  constructor(failed: (err: unknown) => void = () => {}) {
    this.#failed = failed;
  }
  run(task: () => Promise<unknown>): void {
    const p = task()
      .catch((err: unknown) => this.#failed(err))
      .finally(() => this.#running.delete(p));
    this.#running.add(p);
  }
  /** {@link Background.run}, unless a task of this `name` still runs: false then, nothing started. */
  runOnce(name: string, task: () => Promise<unknown>): boolean {
    if (this.#named.has(name)) return false;
    this.#named.add(name);
    this.run(() => task().finally(() => this.#named.delete(name)));
    return true;
  }
  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}

/**
 * Executes one transfer: claims it (PENDING → PROCESSING, so two instances never both run it),
 * moves the money and records the outcome, all in one transaction. Should the transaction fail
 * (a dropped connection, a pool time-out, a deadlock victim), the claim rolls back with it: the
 * transfer is PENDING again, no money moved, and a retry or the next start runs it; a claim made
 * outside the transaction stayed PROCESSING for ever. On PostgreSQL a second instance's claim
 * waits on the row lock and then finds the transfer no longer PENDING.
 */
export async function processTransfer(db: Db, id: number): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable("transfers")
      .set({ status: "PROCESSING" })
      .where("id", "=", id)
      .where("status", "=", "PENDING")
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return;
    const t = await trx.selectFrom("transfers").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    if (db.kind === "postgres") {
      // The debit and the credit below each lock their account's row until commit. Taken in that
      // order, A → B and B → A running together lock the two rows in opposite orders and deadlock;
      // both rows are locked first, in ascending id, so every transfer waits in the same order.
      // (The lock an UPDATE of non-key columns takes: transfers being inserted, whose foreign keys
      // name these accounts, are not held up. SQLite runs one write transaction at a time.)
      await trx
        .selectFrom("accounts")
        .select("id")
        .where("id", "in", [t.from_account_id, t.to_account_id])
        .orderBy("id")
        .forNoKeyUpdate()
        .execute();
    }
    const at = new Date().toISOString();
    const fail = (reason: string) =>
      trx
        .updateTable("transfers")
        .set({ status: "FAILED", failure_reason: reason, completed_at: at })
        .where("id", "=", id)
        .execute();
    // Amounts and balances are integer minor units: the debit and the credit are exact, so the
    // sum of all balances never changes. The debit is conditional on the balance, so two
    // concurrent transfers cannot overdraw; the credit on the largest balance the service keeps.
    const debited = await trx
      .updateTable("accounts")
      .set((eb) => ({ balance: eb("balance", "-", t.amount), updated_at: at }))
      .where("id", "=", t.from_account_id)
      .where("balance", ">=", t.amount)
      .executeTakeFirst();
    if (Number(debited.numUpdatedRows) !== 1) return fail("insufficient funds");
    const credited = await trx
      .updateTable("accounts")
      .set((eb) => ({ balance: eb("balance", "+", t.amount), updated_at: at }))
      .where("id", "=", t.to_account_id)
      .where("balance", "<=", MAX_MINOR - Number(t.amount))
      .executeTakeFirst();
    if (Number(credited.numUpdatedRows) !== 1) {
      // Undo the debit (same transaction), and say why.
      await trx
        .updateTable("accounts")
        .set((eb) => ({ balance: eb("balance", "+", t.amount) }))
        .where("id", "=", t.from_account_id)
        .execute();
      return fail("the credit would exceed the largest balance an account can hold");
    }
    await trx
      .updateTable("transfers")
      .set({ status: "COMPLETED", completed_at: at })
      .where("id", "=", id)
      .execute();
  });
}

/** Delays before the retries of a transfer whose transaction failed: 2.1 s in all. */
const RETRY_DELAYS_MS = [100, 400, 1600];

/**
 * {@link processTransfer}, retried after a failed transaction (which left the transfer PENDING);
 * after the last retry it stays PENDING until a sweep finds it ({@link startTransferSweep}).
 */
export async function runTransfer(db: Db, id: number): Promise<void> {
  for (const delay of [...RETRY_DELAYS_MS, undefined]) {
    try {
      return await processTransfer(db, id);
    } catch (err) {
      if (delay === undefined) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** Runs a transfer in the background, unless this process is running it already. */
function startTransfer(db: Db, background: Background, id: number, delayMs = 0): boolean {
  return background.runOnce(`transfer:${id}`, async () => {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    await runTransfer(db, id);
  });
}

/** Transfers left PENDING by a previous run are executed at start-up: all of them, however new. */
export async function resumeTransfers(db: Db, background: Background): Promise<void> {
  await sweepTransfers(db, background, 0, Number.MAX_SAFE_INTEGER);
}

/** The most stuck transfers one sweep starts; the next sweep takes the rest. */
const SWEEP_LIMIT = 100;

/**
 * Starts the transfers still PENDING `stuckAfterMs` after they were created (their retries ran out
 * while the database was unreachable, or the instance that accepted them died), in the order they
 * were accepted; answers how many it started. Any number of instances may sweep at once: a
 * transfer runs only through {@link processTransfer}'s conditional claim (PENDING → PROCESSING,
 * under the row's lock, in the transaction that moves the money), so it is applied once.
 */
export async function sweepTransfers(
  db: Db,
  background: Background,
  stuckAfterMs: number,
  limit = SWEEP_LIMIT,
): Promise<number> {
  const createdBy = new Date(Date.now() - stuckAfterMs).toISOString();
  const stuck = await db.kysely
    .selectFrom("transfers")
    .select("id")
    .where("status", "=", "PENDING")
    .where("created_at", "<=", createdBy)
    .orderBy("id")
    .limit(limit)
    .execute();
  let started = 0;
  for (const t of stuck) if (startTransfer(db, background, t.id)) started++;
  return started;
}

/** How often a service sweeps, and how old a PENDING transfer must be to count as stuck. */
export interface TransferSweep {
  everyMs: number;
  stuckAfterMs: number;
}

/**
 * A transfer normally runs within milliseconds of its 202; one still PENDING after 10 s is past
 * its retries (2.1 s of back-off) and waits for this sweep, every 5 s.
 */
export const TRANSFER_SWEEP: TransferSweep = { everyMs: 5000, stuckAfterMs: 10_000 };

/**
 * Sweeps for stuck transfers ({@link sweepTransfers}) every `everyMs` while the service runs, one
 * sweep at a time; a sweep that fails (the database unreachable) is tried again at the next tick.
 * Answers the function that stops it.
 */
export function startTransferSweep(db: Db, background: Background, sweep = TRANSFER_SWEEP): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepTransfers(db, background, sweep.stuckAfterMs)
      .catch(() => {})
      .finally(() => {
        sweeping = false;
      });
  }, sweep.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * POST /transfers: the Idempotency-Key's outcome (202 and the Location) commits in the transaction
 * that creates the transfer (PostgreSQL records): a retry replays it whatever fails after the
 * commit, and the transfer is never created twice.
 */
export function transfers(background: Background): CrudResource {
  async function create(req: RequestView, ctx: Ctx) {
    const input = validate(TransferInput, req.body);
    if (!(input.amount > 0)) throw rule("amount", "must be positive");
    if (input.fromAccountId === input.toAccountId)
      throw rule("toAccountId", "must differ from fromAccountId");
    const accounts = await ctx.db.kysely
      .selectFrom("accounts")
      .select(["id", "currency"])
      .where("id", "in", [input.fromAccountId, input.toAccountId])
      .execute();
    const from = accounts.find((a) => a.id === input.fromAccountId);
    const to = accounts.find((a) => a.id === input.toAccountId);
    if (!from) throw rule("fromAccountId", `${input.fromAccountId} does not exist`);
    if (!to) throw rule("toAccountId", `${input.toAccountId} does not exist`);
    if (from.currency !== to.currency)
      throw rule("toAccountId", `holds ${to.currency}, not ${from.currency}`);
    const digits = minorDigits(from.currency);
    const amount = toMinor(input.amount, digits);
    if (amount === undefined) {
      throw rule("amount", `must have at most ${digits} decimal places in ${from.currency}`);
    }
    const insert = (db: Kysely<Database>) =>
      db
        .insertInto("transfers")
        .values({
          from_account_id: from.id,
          to_account_id: to.id,
          amount,
          status: "PENDING",
          failure_reason: null,
          created_at: new Date().toISOString(),
          completed_at: null,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
    const created = await ctx.db.kysely.transaction().execute(async (trx) => {
      const row = await insert(trx);
      await commitKeyIn(trx, ctx.context?.claim, writtenAt(202, ctx.href(`/transfers/${row.id}`)));
      return row;
    });
    // Spec 4.1 rule 8: accepted now, executed later; the status resource shows the outcome.
    startTransfer(ctx.db, background, created.id, 20);
    return reply(await ctx.show(created.id), {
      status: 202,
      headers: { Location: ctx.href(`/transfers/${created.id}`) },
    });
  }
  return {
    path: "/transfers",
    collection: "transfers",
    noun: "Transfer",
    table: "transfers",
    // A transfer's currency is its accounts'.
    base: (db) =>
      loose(db)
        .selectFrom("transfers as t")
        .innerJoin("accounts as a", "a.id", "t.from_account_id")
        .selectAll("t")
        .select("a.currency as currency"),
    list: {
      filters: {
        status: { column: "t.status", match: "eq" },
        fromAccountId: { column: "t.from_account_id", match: "id" },
        toAccountId: { column: "t.to_account_id", match: "id" },
      },
      sort: { id: "t.id", amount: "t.amount", createdAt: "t.created_at" },
    },
    view: (r, { href }) =>
      resourceView(
        {
          id: Number(r.id),
          fromAccountId: Number(r.from_account_id),
          toAccountId: Number(r.to_account_id),
          amount: fromMinor(r.amount, minorDigits(String(r.currency))),
          currency: r.currency,
          status: r.status,
          failureReason: r.failure_reason,
          createdAt: r.created_at,
          completedAt: r.completed_at,
        },
        href(`/transfers/${r.id}`),
        { from: href(`/accounts/${r.from_account_id}`), to: href(`/accounts/${r.to_account_id}`) },
      ),
    writes: ["POST"],
    handlers: { POST: create },
    cacheControl: NO_STORE,
  };
}

/** A line of a cart as the cart lists it and as `/cart/items/{productId}` shows it alone. */
function lineView(
  r: { product_id: number; quantity: number; name: string; price: number },
  href: Href,
): Record<string, unknown> {
  // Spec part 2, Links rule 1: every representation with links carries a `self` link, a line of
  // the cart included (a HAL resource's self is "its URI", draft-kelly-json-hal §8.1), so each
  // line is a resource of its own, named by its product: a cart holds each product at most once.
  return resourceView(
    { productId: r.product_id, name: r.name, quantity: r.quantity, unitPrice: fromMinor(r.price, 2) },
    href(`/cart/items/${r.product_id}`),
    { product: href(`/products/${r.product_id}`) },
  );
}

/** The cart of the caller (the authenticated principal): one per user, no server session. */
export function mountCart(
  routes: Routes,
  db: Db,
  owner: (req: RequestView) => string,
  keys: Keys = NO_KEYS,
): void {
  function lines(req: RequestView, k: Kysely<Database>) {
    return k
      .selectFrom("cart_items as c")
      .innerJoin("products as p", "p.id", "c.product_id")
      .select(["c.product_id", "c.quantity", "p.name", "p.price"])
      .where("c.owner", "=", owner(req));
  }
  async function view(req: RequestView, k: Kysely<Database> = db.kysely) {
    const href = hrefs(req);
    const rows = await lines(req, k).orderBy("c.id").execute();
    const items = rows.map((r) => lineView(r, href));
    // Summed in cents as a BigInt: exact, even when prices raised after the cart was filled take
    // it past 2^53 cents, where a double sum would already be rounded.
    const total = fromMinor(
      rows.reduce((s, r) => s + BigInt(r.quantity) * BigInt(r.price), 0n),
      2,
    );
    const shown = req.state.principal?.id ?? "anonymous";
    return resourceView({ owner: shown, items, total, currency: SERVICE_CURRENCY }, href("/cart"));
  }
  /**
   * A cart write as one transaction that evaluates the preconditions on the cart it is about to
   * change (RFC 9110 §13.1.1: they must hold when the method is applied), so two writes carrying the
   * same tag cannot both win. The cart always exists (possibly empty); If-Match compares with the
   * tag of the representation the client negotiated (JSON, XML, ...), as its GET makes it. One
   * owner's cart writes queue on a transaction-scoped advisory lock on PostgreSQL; SQLite runs one
   * transaction at a time anyway.
   */
  async function guarded(
    req: RequestView,
    write: (trx: Kysely<Database>) => Promise<unknown>,
  ): Promise<void> {
    await db.kysely.transaction().execute(async (trx) => {
      if (db.kind === "postgres") {
        await sql`select pg_advisory_xact_lock(hashtext(${`cart:${owner(req)}`}))`.execute(trx);
      }
      await req.preconditions({ data: await view(req, trx) });
      await write(trx);
    });
  }
  const privateCache = { headers: { "Cache-Control": "private, no-cache" } };
  // Methods run behind the permission check, OPTIONS included; the others are 405 with Allow.
  routes({
    path: "/cart",
    allow: ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"],
    handlers: {
      get: { handle: async (req) => reply(await view(req), privateCache) },
      put: {
        handle: async (req) => {
          const input = validate(CartInput, req.body);
          const ids = [...new Set(input.items.map((i) => i.productId))];
          if (ids.length !== input.items.length) throw rule("items", "must name each product once");
          const found = ids.length
            ? await db.kysely.selectFrom("products").select(["id", "price"]).where("id", "in", ids).execute()
            : [];
          const missing = ids.filter((id) => !found.some((f) => f.id === id));
          if (missing.length) throw rule("items", `name products that do not exist: ${missing.join(", ")}`);
          // The cart's total is what an order of it would cost: beyond the largest payment it could
          // never be paid, and past 2^53 cents the total shown would not be exact.
          const total = input.items.reduce(
            (sum, i) => sum + i.quantity * Number(found.find((f) => f.id === i.productId)?.price),
            0,
          );
          if (total > cents(MONEY_MAX))
            throw rule("items", `total more than ${MONEY_MAX} EUR, the largest payment`);
          await guarded(req, async (trx) => {
            await trx.deleteFrom("cart_items").where("owner", "=", owner(req)).execute();
            if (input.items.length) {
              await trx
                .insertInto("cart_items")
                .values(
                  input.items.map((i) => ({
                    owner: owner(req),
                    product_id: i.productId,
                    quantity: i.quantity,
                  })),
                )
                .execute();
            }
          });
          return view(req);
        },
        options: keys("/cart", "put"),
      },
      delete: {
        handle: async (req) => {
          await guarded(req, (trx) => trx.deleteFrom("cart_items").where("owner", "=", owner(req)).execute());
          return reply.empty();
        },
        // A 204 carries no representation, so no Accept refuses it (RFC 9110 §15.3.5).
        options: { ...keys("/cart", "delete"), produces: [] },
      },
    },
  });
  // One line of the caller's cart, read-only: the cart is changed as a whole through /cart.
  routes({
    path: "/cart/items/:productId",
    allow: ["GET", "HEAD", "OPTIONS"],
    handlers: {
      get: {
        handle: async (req) => {
          const id = parseAssignedId(req.params.productId, "product");
          const row = await lines(req, db.kysely).where("c.product_id", "=", id).executeTakeFirst();
          if (!row) throw HttpError.notFound(`The cart has no line for product ${id}`);
          return reply(lineView(row, hrefs(req)), privateCache);
        },
      },
    },
  });
}

export const employeeProjects: CrudResource = {
  itemRoute: false,
  path: "/employees/:parentId/projects",
  collection: "projects",
  noun: "Project",
  table: "projects",
  parent: { table: "employees", noun: "Employee" },
  base: (db, ctx) =>
    loose(db)
      .selectFrom("projects as t")
      .innerJoin("employee_projects as ep", "ep.project_id", "t.id")
      .innerJoin("departments as d", "d.id", "t.department_id")
      .selectAll("t")
      .select(["ep.role as role", "d.name as department"])
      .where("ep.employee_id", "=", ctx.parentId),
  list: { filters: { status: { column: "t.status", match: "eq" } }, sort: { id: "t.id", name: "t.name" } },
  view: (r, { href }) =>
    resourceView(
      { id: Number(r.id), name: r.name, department: r.department, status: r.status, role: r.role },
      href(`/projects/${r.id}`),
      { department: href(`/departments/${r.department_id}`) },
    ),
};
