import { checkBooleanOption, checkOptionNames, refusedOption } from "@svc/kernel/internal";

const HANDLERS = "an object of handler functions by version number ({ 1: h1, 2: h2, default? })";

/** Options of `versioned()` (`@svc/versioning/express`) and {@link versionDispatch}. */
export interface VersionedOptions {
  /**
   * When a version has no handler of its own, use the nearest lower version's: a route unchanged
   * since version 1 then needs one handler for every later version.
   * @default false (such a version is a 404 for this route)
   */
  inherit?: boolean;
}

/** A table of handlers by version number, with the `default` for a request without a version. */
export type VersionHandlers<H> = Readonly<Record<number, H>> & { default?: H };

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
): (version: number | undefined) => H | undefined {
  if (handlers === null || typeof handlers !== "object" || Array.isArray(handlers)) {
    throw refusedOption("versioning", "handlers", handlers, HANDLERS, "versioned: handlers");
  }
  const table = new Map<number, H>();
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

  return function chooseVersion(version) {
    let handler = version === undefined ? fallback : table.get(version);
    if (handler === undefined && version !== undefined && inherit) {
      const lower = ascending.filter((v) => v < version).pop();
      if (lower !== undefined) handler = table.get(lower);
    }
    // `default` serves only a request without a version: a version without a handler of its own
    // (and none to inherit) is a 404, as documented, so a route left out of a version stays out.
    return handler;
  };
}
