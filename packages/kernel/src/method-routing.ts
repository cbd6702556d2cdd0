/**
 * What a router owes a path whatever the method, read once for every adapter: the `Allow` list
 * (RFC 9110 §10.2.1), the methods a path refuses with 405 (§15.5.6), and the parameters that make
 * a match no match. Plain strings in, plain values out; the Fastify adapter (`expressRouting` of
 * `@svc/kernel/fastify`) turns them into routes, as Express's `route.all()` answers them.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6
 */
import { isToken } from "./grammar.js";
import { checkOptionNames, checkOptionType, refusedOption } from "./option-error.js";

/** Who refused an option, for its message. */
const LABEL = "expressRouting";

/**
 * The methods of an `Allow` field: `methods` upper-cased, each once, in the order given, and
 * `OPTIONS` last, since the path answers it (RFC 9110 §9.3.7). A list of `OPTIONS` alone is what a
 * path with no route of its own allows.
 *
 * @example allowList(["GET", "HEAD", "post"]) // ["GET", "HEAD", "POST", "OPTIONS"]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.1
 */
export function allowList(methods: Iterable<string>): string[] {
  const list: string[] = [];
  for (const method of methods) {
    const upper = method.toUpperCase();
    if (upper !== "OPTIONS" && !list.includes(upper)) list.push(upper);
  }
  list.push("OPTIONS");
  return list;
}

/**
 * The methods of `routable` a path with `allowed` refuses (405): every one it does not allow,
 * `OPTIONS` aside (the path answers it). CONNECT is no method of a path: Node.js answers it apart.
 *
 * @example refusedMethods(["GET", "HEAD", "PUT", "TRACE"], ["GET", "HEAD", "OPTIONS"]) // ["PUT", "TRACE"]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.3.6
 */
export function refusedMethods(routable: readonly string[], allowed: readonly string[]): string[] {
  return routable.filter((m) => m !== "CONNECT" && m !== "OPTIONS" && !allowed.includes(m));
}

/**
 * Whether a route's match took an empty segment for a `:name` parameter: Express's router matches a
 * parameter only to a non-empty segment (`/things/` is no `/things/:id`), where Fastify's matches
 * it empty. The wildcard (`*`) may match nothing on either.
 *
 * @example emptyParameter({ id: "" }) // true
 * @example emptyParameter({ "*": "" }) // false
 */
export function emptyParameter(params: Readonly<Record<string, unknown>>): boolean {
  for (const name in params) if (params[name] === "" && name !== "*") return true;
  return false;
}

/**
 * A path's `Allow` list as given to `allowedMethods`: a non-empty array of RFC 9110 §9.1 method
 * tokens, upper-cased in the order given (as `allowedMethods` of `@svc/errors/express` lists them),
 * `OPTIONS` added last when missing. A `TypeError` with code `ERR_SVC_KERNEL_ALLOW` otherwise.
 *
 * @example checkedAllow(["GET", "HEAD"]) // ["GET", "HEAD", "OPTIONS"]
 * @example checkedAllow(["GET", "OPTIONS", "POST"]) // ["GET", "OPTIONS", "POST"]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.1
 */
export function checkedAllow(allow: unknown): string[] {
  if (
    !Array.isArray(allow) ||
    allow.length === 0 ||
    allow.some((m) => typeof m !== "string" || !isToken(m) || m.toUpperCase() === "CONNECT")
  ) {
    throw refusedOption(
      "kernel",
      "allow",
      allow,
      "a non-empty array of method names (RFC 9110 §9.1 tokens), CONNECT aside",
      `${LABEL}: allowedMethods's allow`,
    );
  }
  const methods = (allow as string[]).map((m) => m.toUpperCase());
  if (!methods.includes("OPTIONS")) methods.push("OPTIONS");
  return methods;
}

/**
 * The fields of an OPTIONS answer as given to `allowedMethods` (`Accept-Post`, `Accept-Patch`):
 * an object of field names (tokens) to string values, or nothing. A `TypeError` with code
 * `ERR_SVC_KERNEL_FIELDS` otherwise.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.1
 */
export function checkedFields(fields: unknown): ReadonlyArray<readonly [string, string]> {
  if (fields === undefined) return [];
  const entries =
    fields !== null && typeof fields === "object" && !Array.isArray(fields)
      ? Object.entries(fields)
      : undefined;
  if (entries === undefined || entries.some(([name, value]) => !isToken(name) || typeof value !== "string")) {
    throw refusedOption(
      "kernel",
      "fields",
      fields,
      "an object of field names to string values",
      `${LABEL}: allowedMethods's fields`,
    );
  }
  return entries.map(([name, value]) => [name.toLowerCase(), value as string] as const);
}

/** The request a routing refusal names: its method and its target as received. */
export interface RoutedTarget {
  /** The request's method, as received. */
  method: string;
  /** The request-target as received (Fastify's `request.originalUrl`), before any rewrite. */
  url: string;
}

/** The options of `expressRouting` as given: see `ExpressRoutingOptions` in `@svc/kernel/fastify`. */
export interface RoutingRefusals {
  notFound?: ((target: RoutedTarget) => Error) | undefined;
  methodNotAllowed?: ((target: RoutedTarget, allowed: readonly string[]) => Error) | undefined;
}

/**
 * `options` checked once: an object (code `ERR_SVC_KERNEL_OPTIONS`) naming only `notFound` and
 * `methodNotAllowed` (`ERR_SVC_KERNEL_UNKNOWN_OPTION`, with the nearest name), each a function
 * when given (`ERR_SVC_KERNEL_NOT_FOUND`, `ERR_SVC_KERNEL_METHOD_NOT_ALLOWED`).
 *
 * @example checkRoutingOptions({ notFound: notFoundError });
 */
export function checkRoutingOptions(options: unknown): RoutingRefusals {
  checkOptionNames("kernel", options, ["notFound", "methodNotAllowed"], LABEL);
  const given = (options ?? {}) as RoutingRefusals;
  checkOptionType(
    "kernel",
    "notFound",
    given.notFound,
    "function",
    "a function (target) => Error",
    `${LABEL}: notFound`,
  );
  checkOptionType(
    "kernel",
    "methodNotAllowed",
    given.methodNotAllowed,
    "function",
    "a function (target, allowed) => Error",
    `${LABEL}: methodNotAllowed`,
  );
  return given;
}
