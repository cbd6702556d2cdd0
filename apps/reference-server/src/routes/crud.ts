import { parseEtagList, preconditions, strongEtag, strongMatch } from "@svc/conditional";
import { HttpError, isHttpError, methodNotAllowed, stringifyJson } from "@svc/errors";
import { hal, pageModel, Rel } from "@svc/hal";
import { xml } from "@svc/negotiate";
import type { Request, Response, Router } from "express";
import { type ExpressionBuilder, sql } from "kysely";
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

/**
 * The strong tag of the representation the client holds, for `If-Match`. Each representation has
 * its own tag (@svc/conditional hashes the bytes sent), and RFC 9110 §13.1.1 compares If-Match with
 * the selected representation's: a client that read the XML sends the XML's tag. The JSON tag
 * (HAL+JSON has the same bytes) is the default; the XML one is computed only when the JSON one is
 * not among the tags sent, so JSON clients pay nothing more.
 */
export async function heldTag(req: Request, view: Record<string, unknown>): Promise<string> {
  // The bytes the JSON representation sends (a BigInt id as a number with all its digits).
  const jsonTag = strongEtag(stringifyJson(view));
  const header = req.headers["if-match"];
  if (header === undefined) return jsonTag;
  const sent = parseEtagList(header);
  if (sent === "*") return jsonTag;
  const holds = (tag: string) => sent.some((t) => strongMatch(`${t.weak ? "W/" : ""}${t.opaque}`, tag));
  if (holds(jsonTag)) return jsonTag;
  const body = await xml.serialize(view, { mediaType: "application/xml", req });
  if (typeof body === "string" || body instanceof Uint8Array) {
    const xmlTag = strongEtag(body);
    if (holds(xmlTag)) return xmlTag;
  }
  return jsonTag;
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
 * Allow, 405 for the rest. Representations, ETags and caching come from the packages.
 */
export function mountCrud(router: Router, db: Db, resource: CrudResource): void {
  const writes = resource.writes ?? (resource.input ? ["POST", "PUT", "PATCH", "DELETE"] : []);
  const itemPath = `${resource.path}/:id`;
  const collectionAllow = ["GET", "HEAD", "OPTIONS", ...(writes.includes("POST") ? ["POST"] : [])];
  const itemAllow = ["GET", "HEAD", "OPTIONS", ...writes.filter((w) => w !== "POST")];

  async function ctxOf(req: Request): Promise<Ctx> {
    const ctx: Ctx = {
      req,
      href: hrefs(req),
      db,
      parentId: undefined,
      show: async (id) => resource.view(await load(ctx, id), ctx),
    };
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

  // A base that does not take the request context is the same query on every request: it is
  // compiled once and only the id is bound per read (the hot path of every item GET).
  const byId =
    resource.base.length < 2
      ? compiledTemplate((id) => resource.base(db, undefined as unknown as Ctx).where("t.id", "=", id as Id))
      : undefined;

  async function load(ctx: Ctx, id: Id): Promise<Record<string, unknown>> {
    const row = byId
      ? (await db.kysely.executeQuery(byId(id))).rows[0]
      : await resource.base(db, ctx).where("t.id", "=", id).executeTakeFirst();
    if (!row) throw HttpError.notFound(`${resource.noun} ${id} does not exist`);
    return row;
  }

  /**
   * The table row an `If-Match` was evaluated against, per request. RFC 9110 §13.1.1: the
   * precondition must hold when the method is applied, not only when it was checked; the write
   * below only succeeds while the row still equals this snapshot, so two writes racing with the
   * same tag (on one instance or across a fleet) cannot both win: one gets 412.
   */
  const snapshots = new WeakMap<Request, Record<string, unknown>>();

  /** A resource that passed If-Match and vanished before the write failed the precondition: 412. */
  async function loadGuarded(req: Request, ctx: Ctx, id: Id): Promise<Record<string, unknown>> {
    try {
      return await load(ctx, id);
    } catch (err) {
      if (snapshots.has(req) && isHttpError(err) && err.status === 404) throw changedMeanwhile();
      throw err;
    }
  }

  async function guardedUpdate(req: Request, id: Id, row: Record<string, unknown>): Promise<void> {
    let query = loose(db).updateTable(resource.table).set(row).where("id", "=", id);
    const snapshot = snapshots.get(req);
    if (snapshot) query = query.where((eb) => eb.and(sameRow(eb, snapshot)));
    const result = await query.executeTakeFirst();
    if (snapshot && Number(result.numUpdatedRows) === 0) throw changedMeanwhile();
  }

  async function guardedDelete(req: Request, id: Id): Promise<void> {
    let query = loose(db).deleteFrom(resource.table).where("id", "=", id);
    const snapshot = snapshots.get(req);
    if (snapshot) query = query.where((eb) => eb.and(sameRow(eb, snapshot)));
    const result = await query.executeTakeFirst();
    if (snapshot && Number(result.numDeletedRows) === 0) throw changedMeanwhile();
  }

  function cache(res: Response): void {
    if (resource.cacheControl) res.setHeader("Cache-Control", resource.cacheControl);
  }

  async function write(req: Request, res: Response, mode: "POST" | "PUT" | "PATCH") {
    const ctx = await ctxOf(req);
    const custom = resource.handlers?.[mode];
    if (custom) return custom(req, res, ctx);
    const schema = (resource.input as (c: Ctx) => z.ZodObject)(ctx);
    const id = mode === "POST" ? undefined : parseId(req.params.id, resource.noun);
    const existing = id === undefined ? undefined : await loadGuarded(req, ctx, id);
    const body =
      mode === "PATCH"
        ? validate(schema.partial(), req.body)
        : (validate(schema, req.body) as Record<string, unknown>);
    if (mode === "PATCH" && Object.keys(body).length === 0) {
      throw HttpError.badRequest("A PATCH must change at least one field", {
        errors: [{ field: "(body)", message: "names no field" }],
      });
    }
    if ("id" in body && body.id !== undefined && body.id !== id) {
      throw HttpError.badRequest("The body's id differs from the resource's", {
        errors: [{ field: "id", message: "must be absent or equal the id in the path" }],
      });
    }
    const row = await (resource.toRow as NonNullable<CrudResource["toRow"]>)(body, ctx);
    if (existing === undefined || id === undefined) {
      if (resource.parent) row[parentColumn(resource)] = ctx.parentId;
      const inserted = await loose(db)
        .insertInto(resource.table)
        .values(row)
        .returning("id")
        .executeTakeFirstOrThrow();
      const created = resource.view(await load(ctx, inserted.id as Id), ctx);
      // The new resource's URI is its self link, so it keeps the version prefix the client used.
      const self = (created._links as { self?: { href?: string } } | undefined)?.self?.href;
      res.setHeader(
        "Location",
        self ?? ctx.href(`${collectionPath(resource, ctx.parentId)}/${String(inserted.id)}`),
      );
      await send(req, res, created, 201);
      return;
    }
    await guardedUpdate(req, id, row);
    await send(req, res, resource.view(await load(ctx, id), ctx));
  }

  const collection = router.route(resource.path);
  // Only a collection that takes POST has a POST route: elsewhere POST is the 405 of `.all` below,
  // decided by routing before permission (a reader gets 405, not 403).
  if (writes.includes("POST")) collection.post((req, res) => write(req, res, "POST"));
  collection
    .get(async (req, res) => {
      const ctx = await ctxOf(req);
      const q = parseListQuery(req.query as Record<string, unknown>, resource.list);
      const { rows, total } = await listPage(resource.base(db, ctx), q, "t.id");
      cache(res);
      send(
        req,
        res,
        pageModel({
          collection: resource.collection,
          items: rows.map((row) => resource.view(row, ctx)),
          page: q.page,
          size: q.size,
          totalElements: total,
          url: req.originalUrl,
          origin: ctx.href(""),
        }),
      );
    })
    .options((_req, res) => {
      res.setHeader("Allow", collectionAllow.join(", "));
      // The media types a POST may carry (W3C LDP 1.0 §7.1, registered with IANA).
      if (writes.includes("POST")) res.setHeader("Accept-Post", WRITE_MEDIA_TYPES);
      res.status(204).end();
    })
    .all(methodNotAllowed(collectionAllow));

  /**
   * The validator a write's `If-Match` is compared with: the strong tag of the JSON (and HAL+JSON)
   * representation the client would GET now, computed the way @svc/conditional tags responses.
   */
  const ifMatch = preconditions({
    current: async (req: Request) => {
      try {
        const ctx = await ctxOf(req);
        const id = parseId(req.params.id as string | undefined, resource.noun);
        // The raw row first, then the representation: if a write lands in between, the row no
        // longer equals the snapshot and the guarded write answers 412 (never a lost update).
        if (req.headers["if-match"] !== undefined || req.headers["if-unmodified-since"] !== undefined) {
          const raw = await loose(db)
            .selectFrom(resource.table)
            .selectAll()
            .where("id", "=", id)
            .executeTakeFirst();
          if (raw) snapshots.set(req, raw);
        }
        const view = await ctx.show(id);
        return { etag: await heldTag(req, view) };
      } catch (err) {
        if (isHttpError(err) && err.status === 404) return undefined;
        throw err;
      }
    },
  });
  if (resource.itemRoute === false) return;
  const item = router.route(itemPath);
  item.get(async (req, res) => {
    const ctx = await ctxOf(req);
    const row = await load(ctx, parseId(req.params.id, resource.noun));
    cache(res);
    await send(req, res, resource.view(row, ctx));
  });
  if (writes.includes("PUT")) item.put(ifMatch, (req, res) => write(req, res, "PUT"));
  if (writes.includes("PATCH")) item.patch(ifMatch, (req, res) => write(req, res, "PATCH"));
  if (writes.includes("DELETE")) {
    item.delete(ifMatch, async (req, res) => {
      const ctx = await ctxOf(req);
      const id = parseId(req.params.id, resource.noun);
      await loadGuarded(req, ctx, id);
      const custom = resource.handlers?.DELETE;
      if (custom) return custom(req, res, ctx);
      await guardedDelete(req, id);
      res.status(204).end();
    });
  }
  item
    .options((_req, res) => {
      res.setHeader("Allow", itemAllow.join(", "));
      // RFC 5789 §3.1: Accept-Patch SHOULD appear in the OPTIONS response of a resource that
      // supports PATCH.
      if (writes.includes("PATCH")) res.setHeader("Accept-Patch", WRITE_MEDIA_TYPES);
      res.status(204).end();
    })
    .all(methodNotAllowed(itemAllow));
}

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
  for (const [rel, href] of Object.entries(links)) if (href !== undefined) r.link(rel, href);
  return r.toJSON() as unknown as Record<string, unknown>;
}
