import { HttpError } from "@svc/errors";
import { checkOptionNames } from "@svc/kernel/internal";
import { anotherOrigin } from "./base-url.js";
import type { HalLink } from "./link.js";
import { optionError } from "./option-error.js";
import { isOriginPath } from "./origin-path.js";
import { Rel } from "./relations.js";
import { HalResource } from "./resource.js";
import { uriChars } from "./uri-chars.js";

/** A validated page request: 1-based `page` and `size`. */
export interface PageRequest {
  /** 1-based page number. */
  page: number;
  /** Items per page. */
  size: number;
}

/** Options of {@link parsePageRequest}. */
export interface PageRequestOptions {
  /**
   * Items per page when the request names none.
   * @default 20
   */
  defaultSize?: number;
  /**
   * The largest `size` accepted; larger values are a 400, not silently capped, so the links the
   * client follows always say what it got.
   * @default 100
   */
  maxSize?: number;
}

/** Query values as Express (`req.query`), `URLSearchParams` or a raw query string give them. */
export type QueryInput = string | URLSearchParams | Readonly<Record<string, unknown>>;

function readParam(query: QueryInput, name: string): unknown {
  if (typeof query === "string") {
    const all = new URLSearchParams(query.startsWith("?") ? query.slice(1) : query).getAll(name);
    return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
  }
  if (query instanceof URLSearchParams) {
    const all = query.getAll(name);
    return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
  }
  return query[name];
}

/**
 * The largest `page` {@link parsePageRequest} reads: far past any collection's end, and small
 * enough that `(page - 1) * size` stays a safe integer for every `size` up to 9 million.
 */
const MAX_PAGE = 999_999_999;

/**
 * One positive integer in decimal (RFC 9110 §15.5.1: a 400 names what is wrong with the request),
 * at most `max`. Any number of digits is read, so one above `max` (page=1000000000) is refused as
 * too large, naming `max`, rather than as no integer; the test and `Number` are linear in the
 * input, which the server's URL length limit bounds, and a value past 2^53 still compares above
 * every `max` (a safe integer).
 */
function positiveInt(input: unknown, field: string, max: number): number {
  // Programmatic callers may pass numbers; query strings always give strings.
  const value = typeof input === "number" && Number.isSafeInteger(input) ? String(input) : input;
  if (typeof value !== "string" || !/^[1-9]\d*$/.test(value)) {
    throw HttpError.badRequest(`Query parameter ${field} must be a positive integer`, {
      errors: [{ field, message: "must be a positive integer" }],
    });
  }
  const n = Number(value);
  if (n > max) {
    throw HttpError.badRequest(`Query parameter ${field} must not exceed ${max}`, {
      errors: [{ field, message: `must not exceed ${max}` }],
    });
  }
  return n;
}

/**
 * Reads `page` (1-based) and `size` from the query. Anything but one
 * positive integer is a 400 `HttpError` with a field error; a page above 999999999 or a size above
 * `maxSize` too, its message naming that limit.
 *
 * @example const { page, size } = parsePageRequest(req.query, { defaultSize: 20, maxSize: 100 });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1
 */
export function parsePageRequest(query: QueryInput, options: PageRequestOptions = {}): PageRequest {
  checkOptionNames("hal", options, ["defaultSize", "maxSize"], "parsePageRequest");
  const defaultSize = options.defaultSize ?? 20;
  const maxSize = options.maxSize ?? 100;
  if (typeof maxSize !== "number" || !Number.isSafeInteger(maxSize) || maxSize < 1) {
    throw optionError("parsePageRequest", "maxSize", maxSize, "a positive integer");
  }
  if (
    typeof defaultSize !== "number" ||
    !Number.isInteger(defaultSize) ||
    defaultSize < 1 ||
    defaultSize > maxSize
  ) {
    throw optionError(
      "parsePageRequest",
      "defaultSize",
      defaultSize,
      `a positive integer not above maxSize (${maxSize})`,
    );
  }
  const rawPage = readParam(query, "page");
  const rawSize = readParam(query, "size");
  return {
    page: rawPage === undefined ? 1 : positiveInt(rawPage, "page", MAX_PAGE),
    size: rawSize === undefined ? defaultSize : positiveInt(rawSize, "size", maxSize),
  };
}

/** Totals of a page (the `page` member of {@link PageModel}). */
export interface PageMetadata {
  /** 1-based number of this page. */
  number: number;
  /** Requested items per page. */
  size: number;
  /** Items in the whole collection (after filtering). */
  totalElements: number;
  /** Pages in the whole collection; 0 when it is empty. */
  totalPages: number;
}

/** The paging links: `first`/`last`/`self` always, `previous`/`next` where they exist. */
export interface PageLinks {
  self: HalLink;
  first: HalLink;
  previous?: HalLink;
  next?: HalLink;
  last: HalLink;
  [rel: string]: HalLink | HalLink[] | undefined;
}

/** A page of a collection as HAL. */
export interface PageModel<Item> {
  _embedded: Record<string, Item[]>;
  page: PageMetadata;
  _links: PageLinks;
}

/** Input of {@link pageModel}. */
export interface PageModelInput<Item> {
  /** The `_embedded` key of the items (`employees`). */
  collection: string;
  /** The items of this page. */
  items: readonly Item[];
  /** This page's request. */
  page: number;
  size: number;
  /** Items in the whole (filtered) collection. */
  totalElements: number;
  /**
   * The request's path and query (`req.originalUrl`): every parameter but `page` is kept in the
   * links. An absolute-form target (`http://host/employees?page=2`) gives its path and query.
   */
  url: string;
  /**
   * Prefix of every link, such as the external origin (`https://api.example.com`); see `externalOrigin`.
   * @default "" (links are paths)
   */
  origin?: string;
}

/**
 * Rewrites `page` and `size` in a query string, keeping every other parameter (`sort`, filters)
 * byte for byte and in order, so the links say exactly what the client asked for.
 */
function withPage(path: string, rawQuery: string, page: number, size: number): string {
  const out: string[] = [];
  let pageDone = false;
  let sizeDone = false;
  for (const pair of rawQuery.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    let key: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, " "));
    } catch {
      key = rawKey;
    }
    if (key === "page") {
      if (!pageDone) out.push(`page=${page}`);
      pageDone = true;
    } else if (key === "size") {
      if (!sizeDone) out.push(`size=${size}`);
      sizeDone = true;
    } else out.push(uriChars(pair));
  }
  if (!pageDone) out.push(`page=${page}`);
  if (!sizeDone) out.push(`size=${size}`);
  return `${uriChars(path)}?${out.join("&")}`;
}

const PAGE_INPUT = ["collection", "items", "page", "size", "totalElements", "url", "origin"];

/** Refuses a {@link pageModel} input that would build broken links or a wrong page. */
function checkPageInput(input: PageModelInput<unknown>): void {
  if (input === null || typeof input !== "object") {
    throw optionError("pageModel", "input", input, `an object with the fields ${PAGE_INPUT.join(", ")}`);
  }
  checkOptionNames("hal", input, PAGE_INPUT, "pageModel", "input");
  const { collection, page, size, totalElements, url, origin } = input;
  if (typeof collection !== "string" || collection === "")
    throw optionError("pageModel", "collection", collection, "a non-empty string");
  if (!Array.isArray(input.items)) throw optionError("pageModel", "items", input.items, "an array");
  if (!Number.isSafeInteger(page) || page < 1)
    throw optionError("pageModel", "page", page, "a 1-based integer");
  if (!Number.isSafeInteger(size) || size < 1)
    throw optionError("pageModel", "size", size, "a positive integer");
  if (!Number.isSafeInteger(totalElements) || totalElements < 0)
    throw optionError("pageModel", "totalElements", totalElements, "a non-negative integer");
  // RFC 3986 §4.2: "//host" would be a network-path reference, another origin. Checked as the
  // links carry the path, percent-encoded (uriChars): "/\host", which the WHATWG URL parser reads
  // as "//host" and Node passes on in a request-target, is "/%5Chost" there, a path of this origin.
  const target = typeof url === "string" ? uriChars(originForm(url)) : undefined;
  if (target === undefined || !target.startsWith("/"))
    throw optionError("pageModel", "url", url, 'a path starting with "/" (req.originalUrl)');
  // A request-target "//host/x" (origin-form allows an empty first segment, RFC 9112 §3.2.1)
  // reaches a catch-all route as req.originalUrl: the client's input, so a 400, not a TypeError.
  if (!isOriginPath(target)) throw anotherOrigin();
  if (origin !== undefined && (typeof origin !== "string" || !isLinkPrefix(origin))) {
    throw optionError(
      "pageModel",
      "origin",
      origin,
      'an absolute http(s) URL without query, fragment or trailing "/" (externalOrigin(req)), or ""',
    );
  }
}

// RFC 9112 §3.2.2: a server MUST accept a request-target in absolute-form (`GET http://host/x`);
// Express's req.originalUrl is then the whole URI. The scheme is case-insensitive (RFC 3986 §3.1).
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The path and query of a request-target: itself in origin-form, the part after the authority in
 * absolute-form (an empty path is "/", RFC 9112 §3.2.1). Only the path and query feed the links;
 * their origin is `origin`, never the authority the client wrote.
 */
function originForm(url: string): string {
  const authority = ABSOLUTE_FORM.exec(url);
  if (authority === null) return url;
  const rest = url.slice(authority[0].length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}

/** `""`, or an http(s) origin with an optional path prefix, which a path can follow. */
function isLinkPrefix(origin: string): boolean {
  if (origin === "") return true;
  if (origin.endsWith("/") || !/^https?:\/\//i.test(origin)) return false;
  try {
    const parsed = new URL(origin);
    return parsed.search === "" && parsed.hash === "" && !origin.includes("?") && !origin.includes("#");
  } catch {
    return false;
  }
}

/**
 * Builds the page wrapper of a collection (`first`/`previous`/`next`/`last` are IANA link relations, RFC 8288 §2.1.1):
 * `{ _embedded: { <collection>: [...] }, page: { number, size, totalElements, totalPages }, _links }`
 * with 1-based numbers. `first` and `last` are always there (`last` is page 1 of an empty
 * collection), `previous` and `next` only where such a page exists, and every link keeps the
 * request's `size`, `sort` and filters.
 *
 * @example
 * const { page, size } = parsePageRequest(req.query);
 * const { rows, total } = await repo.list({ page, size, sort: req.query.sort });
 * res.json(pageModel({ collection: "employees", items: rows, page, size, totalElements: total,
 *   url: req.originalUrl, origin: externalOrigin(req) }));
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-4.1.2
 */
export function pageModel<Item>(input: PageModelInput<Item>): PageModel<Item> {
  checkPageInput(input);
  const { collection, page, size, totalElements } = input;
  const origin = input.origin ?? "";
  // RFC 9112 §3.2: a request-target carries no fragment, but Node passes one through; left in
  // the path, it put every link's page and size inside the fragment.
  const target = originForm(input.url);
  const hash = target.indexOf("#");
  const url = hash === -1 ? target : target.slice(0, hash);
  const cut = url.indexOf("?");
  const path = cut === -1 ? url : url.slice(0, cut);
  const query = cut === -1 ? "" : url.slice(cut + 1);
  const totalPages = Math.ceil(totalElements / size);
  const lastPage = Math.max(totalPages, 1);
  const link = (n: number): HalLink => ({ href: `${origin}${withPage(path, query, n, size)}` });
  const links: PageLinks = { self: link(page), first: link(1), last: link(lastPage) };
  // A page past the end still points back into the collection, at its last page.
  if (page > 1) links[Rel.PREVIOUS] = link(Math.min(page - 1, lastPage));
  if (page < totalPages) links[Rel.NEXT] = link(page + 1);
  return {
    _embedded: { [collection]: [...input.items] },
    page: { number: page, size, totalElements, totalPages },
    _links: {
      self: links.self,
      first: links.first,
      ...(links.previous ? { previous: links.previous } : {}),
      ...(links.next ? { next: links.next } : {}),
      last: links.last,
    },
  };
}

function isItem(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Whether `data` has the shape {@link pageModel} builds: a `page` member and an `_embedded` object
 * holding exactly one list, of objects. Cheap enough for a representation's `canRepresent`, which
 * runs for every response.
 *
 * @example const pageCsv = { mediaType: "text/csv", canRepresent: isPage, serialize: (d, c) => csv.serialize(pageItems(d), c) };
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-4.1.2
 */
export function isPage(data: unknown): data is PageModel<Record<string, unknown>> {
  if (data === null || typeof data !== "object" || !("page" in data)) return false;
  const embedded = (data as { _embedded?: unknown })._embedded;
  if (!isItem(embedded)) return false;
  let list: unknown;
  let lists = 0;
  for (const key in embedded) {
    if (!Object.hasOwn(embedded, key)) continue;
    lists += 1;
    list = embedded[key];
  }
  return lists === 1 && Array.isArray(list) && list.every(isItem);
}

/**
 * The items of a page (see {@link pageModel}) without their `_links`: the rows of a flat
 * representation such as CSV. An item built with `hal(...)` gives the members its `toJSON()`
 * writes. Undefined when `data` is not a page ({@link isPage}).
 *
 * @example pageItems(pageModel({ collection: "employees", items: [hal({ id: 7 }).link("self", "/employees/7").toJSON()], ... })) // [{ id: 7 }]
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-4.1.2
 */
export function pageItems(data: unknown): Record<string, unknown>[] | undefined {
  if (!isPage(data)) return undefined;
  const [items] = Object.values(data._embedded) as Record<string, unknown>[][];
  return (items ?? []).map((entry) => {
    // An item built with `hal(...)` keeps its state in private fields: its members are what its
    // `toJSON()` writes (what JSON and XML carry), not its own enumerable properties (none).
    const { _links, ...item } =
      entry instanceof HalResource ? (entry.toJSON() as Record<string, unknown>) : entry;
    return item;
  });
}
