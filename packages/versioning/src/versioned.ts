import type { ApiVersion } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";
import { SCHEMES, type SchemeRules, type VersionScheme } from "./scheme.js";

const HANDLERS =
  'an object of handler functions by version ({ 1: h1, 2: h2, default? }, { "1.2": h, "2026-11-25": h })';

/** The scheme of a handler key (object keys are strings: `2` is the key `"2"`, the integer 2). */
function keyScheme(key: string): { scheme: VersionScheme; version: ApiVersion } | undefined {
  if (/^[1-9]\d{0,8}$/.test(key)) return { scheme: "integer", version: Number(key) };
  for (const scheme of ["major.minor", "date"] as const) {
    const version = SCHEMES[scheme].read(key);
    if (version !== undefined) return { scheme, version };
  }
  return undefined;
}

/** Options of `versioned()` (`@svc/versioning/express`) and {@link versionDispatch}. */
export interface VersionedOptions {
  /**
   * When a version has no handler of its own, use the nearest lower version's: a route unchanged
   * since version 1 then needs one handler for every later version.
   * @default false (such a version is a 404 for this route)
   */
  inherit?: boolean;
}

/**
 * A table of handlers by version (`1`, or as a string key `"1.2"`, `"2026-11-25"`: versions of one
 * scheme), with the `default` for a request without a version.
 */
export type VersionHandlers<H> = Readonly<Record<string, H>> & { default?: H };

/**
 * The framework-free choice of `versioned()`: the handlers by version, checked once (a key that is
 * no version number, a handler that is no function, an empty table: a `TypeError` with a stable
 * code), then, per request, the handler of the request's version (`exchangeOf(req).version` of
 * `@svc/kernel`, as the pipeline's `prepare` decided it from `versions()`). A version without a
 * handler gives `undefined` (the adapter's 404), or, with `inherit`, the nearest lower version's
 * handler; a request without a version gets the `default` handler, if any.
 *
 * @example
 * const choose = versionDispatch({ 1: getV1, 2: getV2 });
 * const handler = choose(exchangeOf(req).version?.version); // undefined: 404
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5
 */
export function versionDispatch<H>(
  handlers: VersionHandlers<H>,
  options: VersionedOptions = {},
): (version: ApiVersion | undefined) => H | undefined {
  if (handlers === null || typeof handlers !== "object" || Array.isArray(handlers)) {
    throw refusedOption("versioning", "handlers", handlers, HANDLERS, "versioned: handlers");
  }
  const table = new Map<ApiVersion, H>();
  let rules: SchemeRules | undefined;
  for (const [key, handler] of Object.entries(handlers)) {
    if (key === "default") continue;
    const read = keyScheme(key);
    if (read === undefined || (rules !== undefined && rules.name !== read.scheme)) {
      throw refusedOption(
        "versioning",
        "handlers",
        key,
        rules === undefined
          ? "a version (1 to 999999999, major.minor such as 1.2, or an ISO 8601 date such as 2026-11-25) or default"
          : `a version of the other keys' scheme (${rules.name}) or default`,
        "versioned: a key of handlers",
      );
    }
    rules = SCHEMES[read.scheme];
    if (typeof handler !== "function") {
      throw refusedOption(
        "versioning",
        "handlers",
        handler,
        "a function",
        `versioned: the handler of version ${key}`,
      );
    }
    table.set(read.version, handler);
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
  const order = rules ?? SCHEMES.integer;
  const ascending = [...table.keys()].sort(order.compare);
  const inherit = options.inherit ?? false;

  return function chooseVersion(version) {
    let handler = version === undefined ? fallback : table.get(version);
    if (handler === undefined && version !== undefined && inherit) {
      const lower = ascending.filter((v) => order.compare(v, version) < 0).pop();
      if (lower !== undefined) handler = table.get(lower);
    }
    // `default` serves only a request without a version: a version without a handler of its own
    // (and none to inherit) is a 404, as documented, so a route left out of a version stays out.
    return handler;
  };
}
