import {
  type CurrentState,
  preconditionFailed,
  preconditions,
  type RepresentationTags,
  representationTag,
} from "@svc/conditional";
import { allowedMethods, HttpError, isHttpError, negotiationOf } from "@svc/errors";
import { hal, halJson, pageModel, Rel } from "@svc/hal";
import { html, json, type Representation, text, xml } from "@svc/negotiate";
import type { Request, RequestHandler, Response, Router } from "express";
import { type CompiledQuery, type ExpressionBuilder, sql } from "kysely";
import type { z } from "zod";
import type { Db } from "../db/database.js";
import { compiledTemplate, type LooseDb, type LooseQuery, listPage, loose } from "../db/query.js";
import { type Href, hrefs } from "../links.js";
import { type Id, type ListSpec, parseId, parseListQuery, validate } from "../request.js";
import { send } from "../respond.js";

/** Per-request context handed to a resource's callbacks. */
export interface Ctx {
  req: Request;
  href: Href;
  db: Db;
  /** The parent id of a nested collection (`/products/{id}/reviews`). */
  parentId: Id | undefined;
  /** The current representation of an item of this collection (404 when absent). */
  show(id: Id): Promise<Record<string, unknown>>;
}

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
  handlers?: Partial<
    Record<"POST" | "PUT" | "PATCH" | "DELETE", (req: Request, res: Response, ctx: Ctx) => Promise<void>>
  >;
}

/** The representations of one resource, found by the media type negotiation offered. */
const ITEM_REPRESENTATIONS: readonly Representation[] = [json, halJson, xml, text, html];

/**
 * The current strong tag of the representation this request selects, for a write's `If-Match`.
 * RFC 9110 §13.1.1: "the condition is true if any of the listed tags match the entity tag of the
 * selected representation", which §3.2 defines as the one a GET with the same request header
 * fields would have been sent. Every representation has its own tag (the JSON, HAL+JSON and
 * `application/vnd.svc.v1+json` of one state share their bytes, not their tag, §8.8.3), so a
 * client sends the tag of what it reads with the `Accept` it writes with: an XML client that reads
 * and writes with `Accept: application/xml` passes its XML tag, a write without `Accept` is
 * compared with the default JSON one. The representation is serialized only when the request
 * carries a precondition.
 */
export function representationTags(req: Request, view: Record<string, unknown>): RepresentationTags {
  const res = req.res;
  const negotiation = res === undefined ? undefined : negotiationOf(res);
  const match = negotiation?.mediaType;
  const type = match?.mediaType ?? json.mediaType;
  const offer = (match?.offer ?? json.mediaType).split(";")[0]?.trim().toLowerCase();
  const representation = ITEM_REPRESENTATIONS.find((r) => r.mediaType === offer) ?? json;
  const language = negotiation?.language;
  return {
    [type]: async () => {
      const body = await representation.serialize(view, { mediaType: type, language, req, res });
      return typeof body === "string" || body instanceof Uint8Array
        ? representationTag(type, language, body)
        : undefined;
    },
  };
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
 * Allow, 405 for the rest. Representations, ETags, preconditions and caching come from the packages.
 */
export function mountCrud(router: Router, db: Db, resource: CrudResource): void {
  const crud = new Crud(db, resource);
  mountCollection(router, crud);
  if (resource.itemRoute !== false) mountItem(router, crud);
}

/** A handler that names the media types a write may carry on an OPTIONS response. */
function acceptWrites(header: "Accept-Post" | "Accept-Patch"): RequestHandler {
  return (_req, res, next) => {
    res.setHeader(header, WRITE_MEDIA_TYPES);
    next();
  };
}

/**
 * The method handlers run behind the route's permission guard (see `guardedRoutes` in app.ts),
 * OPTIONS included, so it keeps its 401 for a client without credentials; `.all` answers every
 * other method with 405 and `Allow`, decided by routing before permission (a reader gets 405,
 * not 403).
 */
function mountCollection(router: Router, crud: Crud): void {
  const route = router.route(crud.resource.path);
  const allowed = allowedMethods(crud.collectionAllow);
  // Only a collection that takes POST has a POST route: elsewhere POST is the 405 of `.all`.
  if (crud.writes.has("POST")) {
    route.post((req, res) => crud.create(req, res));
    // The media types a POST may carry (W3C LDP 1.0 §7.1, registered with IANA).
    route.options(acceptWrites("Accept-Post"), allowed);
  } else {
    route.options(allowed);
  }
  route.get((req, res) => crud.list(req, res)).all(allowed);
}

function mountItem(router: Router, crud: Crud): void {
  const route = router.route(`${crud.resource.path}/:id`);
  const allowed = allowedMethods(crud.itemAllow);
  const ifMatch = preconditions({ current: (req: Request) => crud.current(req) });
  route.get((req, res) => crud.read(req, res));
  if (crud.writes.has("PUT")) route.put(ifMatch, (req, res) => crud.replace(req, res));
  if (crud.writes.has("DELETE")) route.delete(ifMatch, (req, res) => crud.delete(req, res));
  if (crud.writes.has("PATCH")) {
    route.patch(ifMatch, (req, res) => crud.patch(req, res));
    // RFC 5789 §3.1: Accept-Patch SHOULD appear in the OPTIONS response of a resource that
    // supports PATCH.
    route.options(acceptWrites("Accept-Patch"), allowed);
  } else {
    route.options(allowed);
  }
  route.all(allowed);
}

/** One collection's options resolved once, and its request steps. */
class Crud {
  readonly writes: ReadonlySet<string>;
  readonly collectionAllow: readonly string[];
  readonly itemAllow: readonly string[];
  /**
   * A base that does not take the request context is the same query on every request: it is
   * compiled once and only the id is bound per read (the hot path of every item GET).
   */
  readonly #byId: ((id: unknown) => CompiledQuery) | undefined;
  /**
   * The table row an `If-Match` was evaluated against, per request. RFC 9110 §13.1.1: the
   * precondition must hold when the method is applied, not only when it was checked; the write
   * only succeeds while the row still equals this snapshot, so two writes racing with the same
   * tag (on one instance or across a fleet) cannot both win: one gets 412.
   */
  readonly #snapshots = new WeakMap<Request, Record<string, unknown>>();

  constructor(
    readonly db: Db,
    readonly resource: CrudResource,
  ) {
    const writes = resource.writes ?? (resource.input ? ["POST", "PUT", "PATCH", "DELETE"] : []);
    this.writes = new Set(writes);
    this.collectionAllow = ["GET", "HEAD", "OPTIONS", ...(writes.includes("POST") ? ["POST"] : [])];
    this.itemAllow = ["GET", "HEAD", "OPTIONS", ...writes.filter((w) => w !== "POST")];
    this.#byId =
      resource.base.length < 2
        ? compiledTemplate((id) =>
            resource.base(db, undefined as unknown as Ctx).where("t.id", "=", id as Id),
          )
        : undefined;
  }

  /** GET of the collection: one page, sorted and filtered. */
  async list(req: Request, res: Response): Promise<void> {
    const ctx = await this.ctxOf(req);
    const q = parseListQuery(req.query as Record<string, unknown>, this.resource.list);
    const { rows, total } = await listPage(this.resource.base(this.db, ctx), q, "t.id");
    this.cache(res);
    await send(
      req,
      res,
      pageModel({
        collection: this.resource.collection,
        items: rows.map((row) => this.resource.view(row, ctx)),
        page: q.page,
        size: q.size,
        totalElements: total,
        url: req.originalUrl,
        origin: ctx.href(""),
      }),
    );
  }

  /** GET of one item. */
  async read(req: Request, res: Response): Promise<void> {
    const ctx = this.resource.parent ? await this.ctxOf(req) : this.newCtx(req);
    const id = parseId(req.params.id, this.resource.noun);
    // load() inlined: the common read then costs no promise turn of its own.
    const row = this.loadNow(id) ?? (await this.loadQueued(ctx, id));
    this.cache(res);
    await send(req, res, this.resource.view(row, ctx));
  }

  /** POST: 201 with the new item and its `Location`. */
  async create(req: Request, res: Response): Promise<void> {
    const ctx = await this.ctxOf(req);
    const custom = this.resource.handlers?.POST;
    if (custom) return custom(req, res, ctx);
    const row = await this.rowOf(req, ctx, this.schema(ctx), undefined);
    if (this.resource.parent) row[parentColumn(this.resource)] = ctx.parentId;
    const inserted = await loose(this.db)
      .insertInto(this.resource.table)
      .values(row)
      .returning("id")
      .executeTakeFirstOrThrow();
    const created = this.resource.view(await this.load(ctx, inserted.id as Id), ctx);
    // The new resource's URI is its self link, so it keeps the version prefix the client used.
    const self = (created._links as { self?: { href?: string } } | undefined)?.self?.href;
    res.setHeader(
      "Location",
      self ?? ctx.href(`${collectionPath(this.resource, ctx.parentId)}/${String(inserted.id)}`),
    );
    await send(req, res, created, 201);
  }

  /** PUT: the whole object replaces the item (never creates one). */
  replace(req: Request, res: Response): Promise<void> {
    return this.update(req, res, "PUT");
  }

  /** PATCH: only the fields sent change. */
  patch(req: Request, res: Response): Promise<void> {
    return this.update(req, res, "PATCH");
  }

  /** DELETE → 204. */
  async delete(req: Request, res: Response): Promise<void> {
    const ctx = await this.ctxOf(req);
    const id = parseId(req.params.id, this.resource.noun);
    await this.loadGuarded(req, ctx, id);
    const custom = this.resource.handlers?.DELETE;
    if (custom) return custom(req, res, ctx);
    await this.guardedDelete(req, id);
    res.status(204).end();
  }

  /**
   * The item's current state for `If-Match` (`undefined` when it does not exist): the tag of each
   * representation the client could have read. The raw row is read first, then the
   * representation: if a write lands in between, the row no longer equals the snapshot and the
   * guarded write answers 412 (never a lost update).
   */
  async current(req: Request): Promise<CurrentState | undefined> {
    try {
      const ctx = await this.ctxOf(req);
      const id = parseId(req.params.id as string | undefined, this.resource.noun);
      if (req.headers["if-match"] !== undefined || req.headers["if-unmodified-since"] !== undefined) {
        const raw = await loose(this.db)
          .selectFrom(this.resource.table)
          .selectAll()
          .where("id", "=", id)
          .executeTakeFirst();
        if (raw) this.#snapshots.set(req, raw);
      }
      return { etag: representationTags(req, await ctx.show(id)) };
    } catch (err) {
      if (isHttpError(err) && err.status === 404) return undefined;
      throw err;
    }
  }

  private async update(req: Request, res: Response, mode: "PUT" | "PATCH"): Promise<void> {
    const ctx = await this.ctxOf(req);
    const custom = this.resource.handlers?.[mode];
    if (custom) return custom(req, res, ctx);
    const schema = this.schema(ctx);
    const id = parseId(req.params.id, this.resource.noun);
    await this.loadGuarded(req, ctx, id);
    const row = await this.rowOf(req, ctx, mode === "PATCH" ? schema.partial() : schema, id);
    await this.guardedUpdate(req, id, row);
    await send(req, res, this.resource.view(await this.load(ctx, id), ctx));
  }

  /** The request's context before its parent (if any) is checked. */
  private newCtx(req: Request): Ctx {
    const ctx: Ctx = {
      req,
      href: hrefs(req),
      db: this.db,
      parentId: undefined,
      show: async (id) => this.resource.view(await this.load(ctx, id), ctx),
    };
    return ctx;
  }

  private async ctxOf(req: Request): Promise<Ctx> {
    const { db, resource } = this;
    const ctx = this.newCtx(req);
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

  /** The row by {@link Db.readNow}, or `undefined` when it must wait for Kysely's connection. */
  private loadNow(id: Id): Record<string, unknown> | undefined {
    const rows = this.#byId && this.db.readNow(this.#byId(id));
    return rows === undefined ? undefined : this.found(id, rows[0]);
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

  /** A resource that passed If-Match and vanished before the write failed the precondition: 412. */
  private async loadGuarded(req: Request, ctx: Ctx, id: Id): Promise<Record<string, unknown>> {
    try {
      return await this.load(ctx, id);
    } catch (err) {
      if (this.#snapshots.has(req) && isHttpError(err) && err.status === 404) throw changedMeanwhile();
      throw err;
    }
  }

  /** The update of one row, applied only while the row equals its snapshot. */
  private async guardedUpdate(req: Request, id: Id, row: Record<string, unknown>): Promise<void> {
    let query = loose(this.db).updateTable(this.resource.table).set(row).where("id", "=", id);
    const snapshot = this.#snapshots.get(req);
    if (snapshot) query = query.where((eb) => eb.and(sameRow(eb, snapshot)));
    const result = await query.executeTakeFirst();
    if (snapshot && Number(result.numUpdatedRows) === 0) throw changedMeanwhile();
  }

  /** The delete of one row, applied only while the row equals its snapshot. */
  private async guardedDelete(req: Request, id: Id): Promise<void> {
    let query = loose(this.db).deleteFrom(this.resource.table).where("id", "=", id);
    const snapshot = this.#snapshots.get(req);
    if (snapshot) query = query.where((eb) => eb.and(sameRow(eb, snapshot)));
    const result = await query.executeTakeFirst();
    if (snapshot && Number(result.numDeletedRows) === 0) throw changedMeanwhile();
  }

  private schema(ctx: Ctx): z.ZodObject {
    return (this.resource.input as (c: Ctx) => z.ZodObject)(ctx);
  }

  /** The request body, validated, as column values; business rules throw 422 in `toRow`. */
  private async rowOf(
    req: Request,
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

  private cache(res: Response): void {
    if (this.resource.cacheControl) res.setHeader("Cache-Control", this.resource.cacheControl);
  }
}

/** A write whose row the resource changed meanwhile: 412, its new validators not read here. */
function changedMeanwhile(): HttpError {
  return preconditionFailed({});
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
  for (const [rel, href] of Object.entries(links)) if (href !== undefined) r.link(rel, href);
  return r.toJSON() as unknown as Record<string, unknown>;
}
