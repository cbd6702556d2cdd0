import { parse } from "node:querystring";
import { HttpError } from "@svc/errors";
import { parsePageRequest } from "@svc/hal";
import type { z } from "zod";
import { exactInteger } from "./db/database.js";

/**
 * Validates a body against its schema: a missing, mistyped or unknown field is a 400 carrying
 * one `{ field, message }` per problem.
 */
export function validate<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw HttpError.badRequest("The request body must be a JSON object", {
      errors: [{ field: "(body)", message: "must be an object" }],
    });
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const errors = result.error.issues.flatMap((issue) => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: base ? `${base}.${key}` : key,
        message: "is not a known field",
      }));
    }
    // zod leaves `issue.input` out unless asked to, so whether the field was sent is read from the
    // body: a field of the wrong type is not a missing one.
    const message =
      issue.code === "invalid_type" && valueAt(body, issue.path) === undefined
        ? "is required"
        : issue.message;
    return [{ field: base || "(body)", message }];
  });
  throw HttpError.badRequest("The request body is invalid", { errors });
}

/** The value at `path` inside a parsed JSON body (own properties only), or undefined. */
function valueAt(body: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let at = body;
  for (const key of path) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** An id: 64-bit, a number while exact (below 2^53), a BigInt beyond (see db/database.ts). */
export type Id = number | bigint;

/** The largest id: ids are signed 64-bit integers (a customer id is an `xs:long`). */
export const MAX_ID = 9_223_372_036_854_775_807n;

/**
 * A path id: a positive integer up to 2^63 − 1. Digits beyond that range are a 400 (no id can be
 * that large); anything else that is no positive integer is a 404 (no such resource can exist).
 */
export function parseId(raw: string | string[] | undefined, what = "resource"): Id {
  if (typeof raw !== "string" || !/^[1-9]\d*$/.test(raw)) {
    throw HttpError.notFound(`No ${what} has the id "${String(raw).slice(0, 40)}"`);
  }
  const id = raw.length > 19 ? MAX_ID + 1n : BigInt(raw);
  if (id > MAX_ID) {
    throw HttpError.badRequest(`A ${what} id is at most ${MAX_ID}`, {
      errors: [{ field: "id", message: `must be at most ${MAX_ID}` }],
    });
  }
  return exactInteger(id);
}

/**
 * A path id of a resource only the service numbers (from 1 up, one at a time): {@link parseId}'s
 * answers, and a 404 for an id past 2^53, which no such resource reaches.
 */
export function parseAssignedId(raw: string | string[] | undefined, what = "resource"): number {
  const id = parseId(raw, what);
  if (typeof id === "bigint") throw HttpError.notFound(`No ${what} has the id "${id}"`);
  return id;
}

/** How a query parameter filters a collection. */
export interface FilterSpec {
  /** The column, or for `contains` several columns any of which may match. */
  column: string | readonly string[];
  /**
   * `eq` exact match, `contains` case-insensitive substring, `int` exact integer (0 to 999999999,
   * a 32-bit column), `id` exact 64-bit id (0 to 2^63 − 1, a reference column).
   */
  match: "eq" | "contains" | "int" | "id";
}

/** The parsed query of a collection read. */
export interface ListQuery {
  page: number;
  size: number;
  sort: { column: string; direction: "asc" | "desc" } | undefined;
  filters: Array<{
    column: string | readonly string[];
    match: FilterSpec["match"];
    value: string | number | bigint;
  }>;
}

/** What a collection accepts: its filters and its sort fields (public name → column). */
export interface ListSpec {
  filters: Readonly<Record<string, FilterSpec>>;
  sort: Readonly<Record<string, string>>;
}

/**
 * Reads `page`, `size`, `sort=<field>[,asc|desc]` and the filters of a collection (spec 4.1 rule 9).
 * Anything else, a repeated parameter, an unknown sort field or an out-of-range value is a 400.
 */
export function parseListQuery(query: Readonly<Record<string, unknown>>, spec: ListSpec): ListQuery {
  if ((query as Record<symbol, unknown>)[MALFORMED_QUERY]) {
    throw HttpError.badRequest("The query is not valid percent-encoded UTF-8", {
      errors: [{ field: "(query)", message: "must be percent-encoded UTF-8" }],
    });
  }
  const errors: Array<{ field: string; message: string }> = [];
  for (const [name, value] of Object.entries(query)) {
    // Own properties only: `in` would take `constructor`, `toString` or `__proto__`, inherited
    // from Object.prototype, for filters.
    if (name !== "page" && name !== "size" && name !== "sort" && !Object.hasOwn(spec.filters, name)) {
      const known = ["page", "size", "sort", ...Object.keys(spec.filters)].join(", ");
      errors.push({ field: name, message: `is not a known parameter (known: ${known})` });
    } else if (typeof value !== "string") {
      errors.push({ field: name, message: "must be given once" });
    }
  }
  if (errors.length) throw HttpError.badRequest("The query is invalid", { errors });
  const { page, size } = parsePageRequest(query, { defaultSize: 20, maxSize: 100 });
  let sort: ListQuery["sort"];
  if (typeof query.sort === "string") {
    const [field = "", direction = "asc", ...rest] = query.sort.split(",");
    const column = Object.hasOwn(spec.sort, field) ? spec.sort[field] : undefined;
    if (typeof column !== "string" || rest.length > 0 || (direction !== "asc" && direction !== "desc")) {
      throw HttpError.badRequest("The query is invalid", {
        errors: [
          {
            field: "sort",
            message: `must be <field> or <field>,desc with a field among ${Object.keys(spec.sort).join(", ")}`,
          },
        ],
      });
    }
    sort = { column, direction };
  }
  const filters: ListQuery["filters"] = [];
  for (const [name, filter] of Object.entries(spec.filters)) {
    const value = query[name];
    if (typeof value !== "string") continue;
    // In characters (code points), as the document's `maxLength` counts them (JSON Schema
    // Validation 2020-12 §6.3.1) and the bodies' zod bounds do: `value.length` counts UTF-16 code
    // units, so 101 emoji were "longer than 200". A character is at most two units: past 400, too long.
    if (value === "" || value.length > 400 || [...value].length > 200) {
      errors.push({ field: name, message: "must be 1 to 200 characters" });
    } else if (value.includes("\u0000")) {
      // PostgreSQL text cannot hold NUL: refused here rather than failing in the driver.
      errors.push({ field: name, message: "must not contain NUL characters" });
    } else if (filter.match === "int") {
      if (!/^\d{1,9}$/.test(value)) errors.push({ field: name, message: "must be a non-negative integer" });
      else filters.push({ column: filter.column, match: "int", value: Number(value) });
    } else if (filter.match === "id") {
      // Ids are 64-bit (a customer id is any xs:long a SOAP client chose, README "Ids"), so an id
      // filter takes what a path id takes: up to 2^63 − 1, a BigInt past 2^53 (db/database.ts).
      const id = /^\d{1,19}$/.test(value) ? BigInt(value) : undefined;
      if (id === undefined || id > MAX_ID) {
        errors.push({ field: name, message: `must be an integer from 0 to ${MAX_ID}` });
      } else filters.push({ column: filter.column, match: "id", value: exactInteger(id) });
    } else {
      filters.push({ column: filter.column, match: filter.match, value });
    }
  }
  if (errors.length) throw HttpError.badRequest("The query is invalid", { errors });
  return { page, size, sort, filters };
}

/** Marks a parsed query whose raw form was not valid percent-encoded UTF-8. */
export const MALFORMED_QUERY: unique symbol = Symbol("malformed query");

/**
 * Express's "simple" query parser (`node:querystring`), except that a query which is not valid
 * percent-encoded UTF-8 (`%C3%28`, `%FF`, a stray `%`) is marked with {@link MALFORMED_QUERY}, so
 * {@link parseListQuery} answers 400 instead of filtering on U+FFFD replacement characters
 * (RFC 3986 §2.1, §2.5). It never throws: loggers read `req.query` too.
 *
 * @example app.set("query parser", parseQueryString);
 */
export function parseQueryString(raw: string | null | undefined): Record<string, string | string[]> {
  // Express passes no string at all when the URL has no query.
  if (typeof raw !== "string" || raw === "") return {};
  const query = parse(raw) as Record<string | symbol, unknown>;
  for (const part of raw.split("&")) {
    try {
      decodeURIComponent(part.replace(/\+/g, " "));
    } catch {
      query[MALFORMED_QUERY] = true;
      break;
    }
  }
  return query as Record<string, string | string[]>;
}
