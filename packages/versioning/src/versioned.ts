import type { NextFunction } from "@svc/errors";
import { HttpError } from "@svc/errors";
import { exchangeOf } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";

const HANDLERS = "an object of handler functions by version number ({ 1: h1, 2: h2, default? })";

/** Options of {@link versioned}. */
export interface VersionedOptions {
  /**
   * When a version has no handler of its own, use the nearest lower version's: a route unchanged
   * since version 1 then needs one handler for every later version.
   * @default false (such a version is a 404 for this route)
   */
  inherit?: boolean;
}

type Handler<Req, Res> = (req: Req, res: Res, next: NextFunction) => unknown;

/**
 * A per-route dispatcher on the request's version, as the pipeline's `prepare` decided it from
 * `versions()` (the request's exchange, `exchangeOf(req).version` of `@svc/kernel`): `{ 1: h1, 2: h2 }` calls
 * the handler of the request's version. A version without a handler is a 404 `HttpError` (or, with
 * `inherit`, the nearest lower version's handler). A request without a version (a version-neutral
 * path without a default) uses the `default` handler when given, else 404. Promises returned by
 * handlers are passed through, so Express 5 sees their rejections.
 *
 * @example app.get("/employees/:id", versioned({ 1: getV1, 2: getV2 }));
 * @see versions
 */
export function versioned<Req extends object, Res>(
  handlers: Readonly<Record<number, Handler<Req, Res>>> & { default?: Handler<Req, Res> },
  options: VersionedOptions = {},
): Handler<Req, Res> {
  if (handlers === null || typeof handlers !== "object" || Array.isArray(handlers)) {
    throw refusedOption("versioning", "handlers", handlers, HANDLERS, "versioned: handlers");
  }
  const table = new Map<number, Handler<Req, Res>>();
  for (const [key, handler] of Object.entries(handlers)) {
    if (key === "default") continue;
    if (!/^[1-9]\d{0,8}$/.test(key)) {
      throw refusedOption(
        "versioning",
        "handlers",
        key,
        "a version number (1 to 999999999) or default",
        "versioned: a key of handlers",
      );
    }
    if (typeof handler !== "function") {
      throw refusedOption(
        "versioning",
        "handlers",
        handler,
        "a function",
        `versioned: the handler of version ${key}`,
      );
    }
    table.set(Number(key), handler);
  }
  const fallback = handlers.default;
  if (fallback !== undefined && typeof fallback !== "function") {
    throw refusedOption("versioning", "handlers", fallback, "a function", "versioned: the default handler");
  }
  if (table.size === 0 && fallback === undefined) {
    throw refusedOption(
      "versioning",
      "handlers",
      handlers,
      `${HANDLERS} with one handler at least`,
      "versioned: handlers",
    );
  }
  checkOptionNames("versioning", options, ["inherit"], "versioned");
  checkBooleanOption("versioning", "inherit", options.inherit, "versioned: inherit");
  const ascending = [...table.keys()].sort((a, b) => a - b);
  const inherit = options.inherit ?? false;

  return function svcVersioned(req: Req, res: Res, next: NextFunction): unknown {
    const version = exchangeOf(req).version?.version;
    let handler = version === undefined ? fallback : table.get(version);
    if (handler === undefined && version !== undefined && inherit) {
      const lower = ascending.filter((v) => v < version).pop();
      if (lower !== undefined) handler = table.get(lower);
    }
    // `default` serves only a request without a version: a version without a handler of its own
    // (and none to inherit) is a 404, as documented, so a route left out of a version stays out.
    if (handler === undefined) {
      next(
        HttpError.notFound(
          version === undefined
            ? "This resource needs an API version"
            : `This resource is not available in API version ${version}`,
        ),
      );
      return undefined;
    }
    return handler(req, res, next);
  };
}
