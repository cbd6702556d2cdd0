import { HttpError, isHttpError } from "@svc/errors";
import { hal, pageModel, Rel } from "@svc/hal";
import { type HandlerContext, type Reply, type ReplyInit, reply } from "@svc/kernel";
import { type CompiledQuery, type ExpressionBuilder, type Kysely, sql } from "kysely";
import type { z } from "zod";
import { commitKeyIn, writtenAt } from "../commit-key.js";
import type { Db } from "../db/database.js";
import { compiledTemplate, type LooseDb, type LooseQuery, listPage, loose } from "../db/query.js";
import { type Href, hrefs } from "../links.js";
import { type Keys, NO_KEYS } from "../pipeline.js";
import { type Id, type ListSpec, parseId, parseListQuery, validate } from "../request.js";
import type { RequestView, Routes } from "../view.js";

/** Per-request context handed to a resource's callbacks. */
export interface Ctx {
  req: RequestView;
  href: Href;
  db: Db;
  /** The parent id of a nested collection (`/products/{id}/reviews`). */
  parentId: Id | undefined;
  /** The current representation of an item of this collection (404 when absent). */
  show(id: Id): Promise<Record<string, unknown>>;
  /** What the pipeline tells the handler: the request's version, its Idempotency-Key claim. */
  context: HandlerContext | undefined;
}

/**
 * A write whose rules go beyond a row update. It returns what the client is sent: data (a 200 in
 * the negotiated representation) or a `reply(...)` with its status and fields.
 */
export type WriteHandler = (req: RequestView, ctx: Ctx) => Promise<Reply | Record<string, unknown>>;

/** How one collection maps onto its table and its representation. */
export interface CrudResource {
  /** Collection path with Express parameters: `/departments`, `/products/:parentId/reviews`. */
  path: string;
  /** `_embedded` key of pages. */
  collection: string;
  /** Singular noun for messages. */
  noun: string;
  table: string;
  /** The select, aliased `t` for the table itself. */
  base(db: Db, ctx: Ctx): LooseQuery;
  list: ListSpec;
  view(row: Record<string, unknown>, ctx: Ctx): Record<string, unknown>;
  /** The write schema; absent for read-only collections. */
  input?: (ctx: Ctx) => z.ZodObject;
  /** Input → column values; business rules throw 422 here. */
  toRow?: (input: Record<string, unknown>, ctx: Ctx) => Promise<Record<string, unknown>>;
  /** Parent existence check for nested collections. */
  parent?: { table: string; noun: string };
  /** Which writes exist. */
  writes?: ReadonlyArray<"POST" | "PUT" | "PATCH" | "DELETE">;
  /**
   * Whether `<path>/:id` is mounted; `false` for nested lists whose items live elsewhere
   * (an employee's projects are `/projects/{id}`).
   * @default true
   */
  itemRoute?: boolean;
  /** `Cache-Control` of reads. */
  cacheControl?: string;
  /** Writes whose rules go beyond a row update (state transitions, several tables). */
  handlers?: Partial<Record<"POST" | "PUT" | "PATCH" | "DELETE", WriteHandler>>;
}

/** What write bodies may be: the app's body parser takes JSON only (a write in XML is a 415). */
const WRITE_MEDIA_TYPES = "application/json";

/** Turns each path segment `:x` of a collection path into the concrete path of a request. */
function collectionPath(resource: CrudResource, parentId: Id | undefined): string {
  return resource.path.replace(":parentId", String(parentId));
}

/**
 * Mounts the list, item and write routes of a collection: paging, sorting and filtering, 201 +
 * Location, PUT needing the whole object, PATCH changing only what is sent, DELETE → 204, OPTIONS →
 * Allow, 405 for the rest. Each handler returns data; representations, ETags, preconditions,
 * coding and caching come from the pipeline the composition runs it in.
 */
export function mountCrud(routes: Routes, db: Db, resource: CrudResource, keys: Keys = NO_KEYS): void {
  const crud = new Crud(db, resource);
  mountCollection(routes, crud, keys);
  if (resource.itemRoute !== false) mountItem(routes, crud, keys);
}

/**
 * The method handlers run behind the route's permission check, OPTIONS included, so it keeps its
 * 401 for a client without credentials; every other method is a 405 with `Allow`, decided by
 * routing before permission (a reader gets 405, not 403). Only a collection that takes POST has a
 * POST route: elsewhere POST is a 405.
 */
function mountCollection(routes: Routes, crud: Crud, keys: Keys): void {
  const path = crud.resource.path;
  routes({
    path,
    allow: crud.collectionAllow,
    handlers: {
      get: { handle: (req) => crud.list(req) },
      ...(crud.writes.has("POST")
        ? { post: { handle: (req, context) => crud.create(req, context), options: keys(path, "post") } }
        : {}),
    },
    // The media types a POST may carry (W3C LDP 1.0 §7.1, registered with IANA).
    optionsFields: crud.writes.has("POST") ? { "Accept-Post": WRITE_MEDIA_TYPES } : undefined,
  });
}

function mountItem(routes: Routes, crud: Crud, keys: Keys): void {
  const path = `${crud.resource.path}/:id`;
  const handlers: Parameters<Routes>[0]["handlers"] = { get: { handle: (req) => crud.read(req) } };
  if (crud.writes.has("PUT"))
    handlers.put = { handle: (req, c) => crud.update(req, c, "PUT"), options: keys(path, "put") };
  if (crud.writes.has("DELETE"))
    // A 204 carries no representation, so no Accept refuses it (RFC 9110 §15.3.5).
    handlers.delete = {
      handle: (req, c) => crud.delete(req, c),
      options: { ...keys(path, "delete"), produces: [] },
    };
  if (crud.writes.has("PATCH"))
    handlers.patch = { handle: (req, c) => crud.update(req, c, "PATCH"), options: keys(path, "patch") };
  routes({
    path,
    allow: crud.itemAllow,
    handlers,
    // RFC 5789 §3.1: Accept-Patch SHOULD appear in the OPTIONS response of a resource that
    // supports PATCH.
    optionsFields: crud.writes.has("PATCH") ? { "Accept-Patch": WRITE_MEDIA_TYPES } : undefined,
  });
}

/** One collection's options resolved once, and its request steps. */
class Crud {
  readonly writes: ReadonlySet<string>;
  readonly collectionAllow: readonly string[];
  readonly itemAllow: readonly string[];
  /** The reply options of reads: the resource's `Cache-Control`. */
  readonly #reads: ReplyInit;
  /**
   * A base that does not take the request context is the same query on every request: it is
   * compiled once and only the id is bound per read (the hot path of every item GET).
   */
  readonly #byId: ((id: unknown) => CompiledQuery) | undefined;

  constructor(
    readonly db: Db,
    readonly resource: CrudResource,
  ) {
    const writes = resource.writes ?? (resource.input ? ["POST", "PUT", "PATCH", "DELETE"] : []);
    this.writes = new Set(writes);
    this.collectionAllow = ["GET", "HEAD", "OPTIONS", ...(writes.includes("POST") ? ["POST"] : [])];
    this.itemAllow = ["GET", "HEAD", "OPTIONS", ...writes.filter((w) => w !== "POST")];
    this.#reads = resource.cacheControl ? { headers: { "Cache-Control": resource.cacheControl } } : {};
    this.#byId =
      resource.base.length < 2
        ? compiledTemplate((id) =>
            resource.base(db, undefined as unknown as Ctx).where("t.id", "=", id as Id),
          )
        : undefined;
  }

  /** GET of the collection: one page, sorted and filtered. */
  async list(req: RequestView): Promise<Reply> {
    const ctx = await this.ctxOf(req, undefined);
    const q = parseListQuery(req.query as Record<string, unknown>, this.resource.list);
    const { rows, total } = await listPage(this.resource.base(this.db, ctx), q, "t.id");
    return reply(
      pageModel({
        collection: this.resource.collection,
        items: rows.map((row) => this.resource.view(row, ctx)),
        page: q.page,
        size: q.size,
        totalElements: total,
        url: req.originalUrl,
        origin: ctx.href(""),
      }),
      this.#reads,
    );
  }

  /** GET of one item. */
  async read(req: RequestView): Promise<Reply> {
    const ctx = this.resource.parent ? await this.ctxOf(req, undefined) : this.newCtx(req, undefined);
    const id = parseId(req.params.id, this.resource.noun);
    // load() inlined: the common read then costs no promise turn of its own.
    const row = this.loadNow(id) ?? (await this.loadQueued(ctx, id));
    return reply(this.resource.view(row, ctx), this.#reads);
  }

  /** POST: 201 with the new item and its `Location`. */
  async create(req: RequestView, context: HandlerContext): Promise<unknown> {
    const ctx = await this.ctxOf(req, context);
    const custom = this.resource.handlers?.POST;
    if (custom) return custom(req, ctx);
    const row = await this.rowOf(req, ctx, this.schema(ctx), undefined);
    if (this.resource.parent) row[parentColumn(this.resource)] = ctx.parentId;
    // The new resource's URI keeps the version prefix the client used (it is its self link).
    const locationOf = (id: unknown) =>
      ctx.href(`${collectionPath(this.resource, ctx.parentId)}/${String(id)}`);
    // The Idempotency-Key's outcome commits with the row (PostgreSQL records): a retry replays it
    // whatever fails after the commit, and the row is never inserted twice.
    const inserted = await this.db.kysely.transaction().execute(async (trx) => {
      const created = await (trx as unknown as Kysely<LooseDb>)
        .insertInto(this.resource.table)
        .values(row)
        .returning("id")
        .executeTakeFirstOrThrow();
      await commitKeyIn(trx, ctx.context?.claim, writtenAt(201, locationOf(created.id)));
      return created;
    });
    const created = this.resource.view(await this.load(ctx, inserted.id as Id), ctx);
    return reply(created, { status: 201, headers: { Location: locationOf(inserted.id) } });
  }

  /** DELETE → 204. */
  async delete(req: RequestView, context: HandlerContext): Promise<unknown> {
    const ctx = await this.ctxOf(req, context);
    const id = parseId(req.params.id, this.resource.noun);
    const { snapshot } = await this.current(req, ctx, id);
    const custom = this.resource.handlers?.DELETE;
    if (custom) return custom(req, ctx);
    await this.guardedDelete(id, snapshot);
    return reply.empty();
  }

  /** PUT (the whole object replaces the item, never creates one) or PATCH (only the fields sent change). */
  async update(req: RequestView, context: HandlerContext, mode: "PUT" | "PATCH"): Promise<unknown> {
    const ctx = await this.ctxOf(req, context);
    const id = parseId(req.params.id, this.resource.noun);
    const { snapshot } = await this.current(req, ctx, id);
    const custom = this.resource.handlers?.[mode];
    if (custom) return custom(req, ctx);
    const schema = this.schema(ctx);
    const row = await this.rowOf(req, ctx, mode === "PATCH" ? schema.partial() : schema, id);
    await this.guardedUpdate(id, row, snapshot);
    return this.resource.view(await this.load(ctx, id), ctx);
  }

  /**
   * The item a write applies to, with the request's preconditions evaluated on it (RFC 9110
   * §13.2.2): its 404 first, which §13.2.1 puts before any precondition (`If-Match: *` on an
   * absent item is a 404), then the tag of the representation the client negotiated, made the way
   * its GET makes it (`svc.preconditions`). The raw row is read first, as the snapshot the write
   * is applied against (RFC 9110 §13.1.1: the precondition must hold when the method is applied,
   * not only when it was checked): if a write lands in between, the row no longer equals the
   * snapshot and the guarded write answers 412 (never a lost update), and an item that vanished
   * after it was read is a 412 too.
   */
  private async current(
    req: RequestView,
    ctx: Ctx,
    id: Id,
  ): Promise<{ row: Record<string, unknown>; snapshot: Record<string, unknown> | undefined }> {
    const snapshot =
      req.headers["if-match"] !== undefined || req.headers["if-unmodified-since"] !== undefined
        ? await loose(this.db)
            .selectFrom(this.resource.table)
            .selectAll()
            .where("id", "=", id)
            .executeTakeFirst()
        : undefined;
    let row: Record<string, unknown>;
    try {
      row = await this.load(ctx, id);
    } catch (err) {
      if (snapshot !== undefined && isHttpError(err) && err.status === 404) throw changedMeanwhile();
      throw err;
    }
    await req.preconditions({ data: this.resource.view(row, ctx) });
    return { row, snapshot };
  }

  /** The request's context before its parent (if any) is checked. */
  private newCtx(req: RequestView, context: HandlerContext | undefined): Ctx {
    const ctx: Ctx = {
      req,
      href: hrefs(req),
      db: this.db,
      parentId: undefined,
      show: async (id) => this.resource.view(await this.load(ctx, id), ctx),
      context,
    };
    return ctx;
  }

  private async ctxOf(req: RequestView, context: HandlerContext | undefined): Promise<Ctx> {
    const { db, resource } = this;
    const ctx = this.newCtx(req, context);
    if (resource.parent) {
      const parentId = parseId(req.params.parentId, resource.parent.noun);
      const found = await loose(db)
        .selectFrom(resource.parent.table)
        .select("id")
        .where("id", "=", parentId)
        .executeTakeFirst();
      if (!found) throw HttpError.notFound(`${resource.parent.noun} ${parentId} does not exist`);
      ctx.parentId = parentId;
    }
    return ctx;
  }

  /** The row (404 when there is none): read at once when it can be, else through Kysely. */
  private async load(ctx: Ctx, id: Id): Promise<Record<string, unknown>> {
    return this.loadNow(id) ?? (await this.loadQueued(ctx, id));
  }

  /** The row by {@link Db.readFirstNow}, or `undefined` when it must wait for Kysely's connection. */
  private loadNow(id: Id): Record<string, unknown> | undefined {
    const row = this.#byId && this.db.readFirstNow(this.#byId(id));
    return row === undefined ? undefined : this.found(id, row);
  }

  /** The row through Kysely, which waits its turn for the connection. */
  private async loadQueued(ctx: Ctx, id: Id): Promise<Record<string, unknown>> {
    const row = this.#byId
      ? (await this.db.kysely.executeQuery(this.#byId(id))).rows[0]
      : await this.resource.base(this.db, ctx).where("t.id", "=", id).executeTakeFirst();
    return this.found(id, row);
  }

  private found(id: Id, row: unknown): Record<string, unknown> {
    if (!row) throw HttpError.notFound(`${this.resource.noun} ${id} does not exist`);
    return row as Record<string, unknown>;
  }

  /** The update of one row, applied only while the row equals its snapshot. */
  private async guardedUpdate(
    id: Id,
    row: Record<string, unknown>,
    snapshot: Record<string, unknown> | undefined,
  ): Promise<void> {
    let query = loose(this.db).updateTable(this.resource.table).set(row).where("id", "=", id);
    if (snapshot) query = query.where((eb) => eb.and(sameRow(eb, snapshot)));
    const result = await query.executeTakeFirst();
    if (snapshot && Number(result.numUpdatedRows) === 0) throw changedMeanwhile();
  }

  /** The delete of one row, applied only while the row equals its snapshot. */
  private async guardedDelete(id: Id, snapshot: Record<string, unknown> | undefined): Promise<void> {
    let query = loose(this.db).deleteFrom(this.resource.table).where("id", "=", id);
    if (snapshot) query = query.where((eb) => eb.and(sameRow(eb, snapshot)));
    const result = await query.executeTakeFirst();
    if (snapshot && Number(result.numDeletedRows) === 0) throw changedMeanwhile();
  }

  private schema(ctx: Ctx): z.ZodObject {
    return (this.resource.input as (c: Ctx) => z.ZodObject)(ctx);
  }

  /** The request body, validated, as column values; business rules throw 422 in `toRow`. */
  private async rowOf(
    req: RequestView,
    ctx: Ctx,
    schema: z.ZodObject,
    id: Id | undefined,
  ): Promise<Record<string, unknown>> {
    const body = validate(schema, req.body) as Record<string, unknown>;
    if (req.method === "PATCH" && Object.keys(body).length === 0) {
      throw HttpError.badRequest("A PATCH must change at least one field", {
        errors: [{ field: "(body)", message: "names no field" }],
      });
    }
    if ("id" in body && body.id !== undefined && body.id !== id) {
      throw HttpError.badRequest("The body's id differs from the resource's", {
        errors: [{ field: "id", message: "must be absent or equal the id in the path" }],
      });
    }
    return (this.resource.toRow as NonNullable<CrudResource["toRow"]>)(body, ctx);
  }
}

/** A write whose row the resource changed meanwhile: 412, its new validators not read here. */
function changedMeanwhile(): HttpError {
  return HttpError.preconditionFailed("The resource has changed since the precondition was computed", {
    code: "precondition_failed",
  });
}

/** `col = value` for every column of a row read earlier (`is null` for nulls): a compare-and-swap. */
function sameRow(eb: ExpressionBuilder<LooseDb, string>, row: Record<string, unknown>) {
  return Object.entries(row).map(([column, value]) =>
    value === null ? eb(sql.ref(column), "is", null) : eb(sql.ref(column), "=", value),
  );
}

function parentColumn(resource: CrudResource): string {
  // Nested collections name their parent column after the parent noun: product → product_id.
  return `${(resource.parent as { noun: string }).noun.toLowerCase()}_id`;
}

/** A HAL resource with its self link and the given relations, as plain JSON. */
export function resourceView(
  state: Record<string, unknown>,
  self: string,
  links: Record<string, string | undefined> = {},
): Record<string, unknown> {
  const r = hal(state).link(Rel.SELF, self);
  for (const rel in links) {
    const href = Object.hasOwn(links, rel) ? links[rel] : undefined;
    if (href !== undefined) r.link(rel, href);
  }
  return r.toJSON() as unknown as Record<string, unknown>;
}
