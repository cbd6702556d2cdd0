import { type Answer, isToken, type Passage, type RequestView } from "@svc/kernel";
import { checkOptionNames, describeValue } from "@svc/kernel/internal";
import { negotiateChannel, publishCorsRefusal } from "./diagnostics.js";
import { optionError } from "./options.js";

/**
 * Who may read a response: a serialized origin (`"https://app.example"`), a pattern tested
 * against the request's `Origin` (`/^https:\/\/[a-z0-9-]+\.app\.example$/`), or a function of it
 * (`(origin) => boolean | Promise<boolean>`, to look it up). The opaque origin `"null"` is only
 * allowed by the entry `"null"` itself: never by a pattern or a function.
 */
export type OriginMatcher = string | RegExp | ((origin: string) => boolean | Promise<boolean>);

/** Options of `crossOrigin()`. */
export interface CrossOriginOptions {
  /**
   * The origins allowed to read responses: a list of serialized origins (`https://app.example`,
   * `http://localhost:5173`: scheme, host and port only), patterns and functions (see
   * {@link OriginMatcher}), a single function, or `"*"` for any origin without credentials. The
   * entry `"null"` allows the opaque origin that sandboxed iframes, `file:` pages and some
   * redirects send: any site can produce it, so allowing it is allowing everyone; it is never
   * matched by a pattern or a function. An allowed origin is echoed in
   * `Access-Control-Allow-Origin` with `Vary: Origin`; `"*"` is sent as `*`.
   */
  origins: readonly OriginMatcher[] | ((origin: string) => boolean | Promise<boolean>) | "*";
  /**
   * Let an allowed origin's scripts send and read with credentials (cookies, HTTP authentication):
   * `Access-Control-Allow-Credentials: true` on its preflight and actual responses. The Fetch
   * standard refuses `*` with credentials, so `origins: "*"` with `credentials: true` is refused
   * here, at construction.
   * @default false
   */
  credentials?: boolean;
  /**
   * Answer a preflight that asks for access to a private network
   * (`Access-Control-Request-Private-Network: true`, Private Network Access) with
   * `Access-Control-Allow-Private-Network: true`, for an allowed origin; only when asked.
   * @default false
   */
  privateNetwork?: boolean;
  /**
   * Response header names a script of an allowed origin may read beyond the CORS-safelisted ones
   * (`Access-Control-Expose-Headers`). `WWW-Authenticate` and `DPoP-Nonce` are exposed besides,
   * always: the fields a client is asked to authenticate with (RFC 9110 §11.6.1, RFC 9449 §9).
   * @default []
   */
  exposedHeaders?: readonly string[];
  /**
   * Seconds a browser may cache a preflight's answer (`Access-Control-Max-Age`).
   * @default no Access-Control-Max-Age (the browser's default, 5 seconds)
   */
  maxAge?: number;
}

/** A serialized origin (RFC 6454 §6.2) of an http(s) URL: what a browser sends in `Origin`. */
function isSerializedOrigin(value: unknown): value is string {
  if (typeof value !== "string" || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
}

/** The allowed origins resolved: names, patterns and functions; `"*"` for any. */
interface Allowed {
  readonly any: boolean;
  readonly names: ReadonlySet<string>;
  readonly patterns: readonly RegExp[];
  readonly functions: readonly ((origin: string) => boolean | Promise<boolean>)[];
}

const ORIGINS =
  'a non-empty array of origins (serialized http(s) origins such as "https://app.example": scheme://host[:port], no path or trailing slash; "null"; RegExps; functions (origin) => boolean | Promise<boolean>), a function, or "*"';

function resolveOrigins(origins: unknown, credentials: boolean): Allowed {
  if (origins === "*") {
    // Fetch standard §3.2.5: "Access-Control-Allow-Origin: *" with credentials fails the CORS check.
    if (credentials) {
      throw optionError(
        "origins",
        'crossOrigin: origins "*" cannot be used with credentials: true (the Fetch standard fails a credentialed request answered with *); list the origins, or give a pattern or a function',
      );
    }
    return { any: true, names: new Set(), patterns: [], functions: [] };
  }
  const list = typeof origins === "function" ? [origins] : origins;
  if (!Array.isArray(list) || list.length === 0) {
    throw optionError("origins", `crossOrigin: origins must be ${ORIGINS}, got ${describeValue(origins)}`);
  }
  const names = new Set<string>();
  const patterns: RegExp[] = [];
  const functions: ((origin: string) => boolean | Promise<boolean>)[] = [];
  for (const origin of list as unknown[]) {
    if (origin === "null" || isSerializedOrigin(origin)) names.add(origin);
    // Without g or y, test() keeps no lastIndex between requests.
    else if (origin instanceof RegExp)
      patterns.push(new RegExp(origin.source, origin.flags.replace(/[gy]/g, "")));
    else if (typeof origin === "function") functions.push(origin as (origin: string) => boolean);
    else
      throw optionError("origins", `crossOrigin: origins must be ${ORIGINS}, got ${describeValue(origin)}`);
  }
  return { any: false, names, patterns, functions };
}

/** An `Origin` longer than any real one is never tested against a pattern (bounded input). */
const MAX_ORIGIN_LENGTH = 2048;

/**
 * Whether `origin` is allowed: by name, then pattern, then function. The opaque origin `null`
 * (Fetch standard §3.2.2: a request's origin is serialized as `null` when it is opaque) only by
 * the name `"null"`.
 */
function isAllowed(allowed: Allowed, origin: string): boolean | Promise<boolean> {
  if (allowed.names.has(origin)) return true;
  if (origin === "null" || origin.length > MAX_ORIGIN_LENGTH) return false;
  if (allowed.patterns.some((p) => p.test(origin))) return true;
  if (allowed.functions.length === 0) return false;
  const answers = allowed.functions.map((f) => f(origin));
  if (answers.every((a) => typeof a === "boolean")) return answers.some((a) => a === true);
  return Promise.all(answers).then((all) => all.some((a) => a === true));
}

function resolveFlag(name: "credentials" | "privateNetwork", value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") {
    throw optionError(name, `crossOrigin: ${name} must be a boolean, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * The fields a server asks a client to authenticate with, exposed to every allowed origin whatever
 * `exposedHeaders` lists: the challenge of a 401 (RFC 9110 §11.6.1, with RFC 6750 §3's and RFC
 * 9449 §7.1's `error`) and the nonce a DPoP client must put in its next proof (RFC 9449 §8, §9),
 * sent on a 401 and on successful responses alike. A script that cannot read them cannot follow
 * the protocol at all; exposing a name a response does not carry costs nothing.
 */
const AUTHENTICATION_FIELDS = ["WWW-Authenticate", "DPoP-Nonce"] as const;

function resolveExposedHeaders(headers: unknown): readonly string[] {
  if (headers === undefined) return [];
  if (!Array.isArray(headers) || headers.some((h) => typeof h !== "string" || !isToken(h))) {
    throw optionError(
      "exposedHeaders",
      `crossOrigin: exposedHeaders must be an array of header field names (RFC 9110 §5.1 tokens), got ${describeValue(headers)}`,
    );
  }
  return headers;
}

function resolveMaxAge(maxAge: unknown): number | undefined {
  if (maxAge === undefined) return undefined;
  if (typeof maxAge !== "number" || !Number.isSafeInteger(maxAge) || maxAge < 0) {
    throw optionError(
      "maxAge",
      `crossOrigin: maxAge must be a non-negative whole number of seconds, got ${describeValue(maxAge)}`,
    );
  }
  return maxAge;
}

/**
 * The methods a preflight allows (`Access-Control-Allow-Methods`): the `cors` package's default
 * list, which this package answered with before its decision became a gate.
 */
const ALLOWED_METHODS = "GET,HEAD,PUT,PATCH,POST,DELETE";

/**
 * CORS (Fetch standard §3.2, the CORS protocol) as a framework-free `Gate` of `@svc/kernel`: a
 * {@link RequestView} in, the decision out. Synchronous, but for an origin that only a function
 * returning a promise decides: then a promise of the decision.
 *
 * - A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin is an
 *   `Answer`: 204 with `Access-Control-Allow-Origin`, `-Allow-Methods`, `-Allow-Headers` (the
 *   requested ones), `-Max-Age`, `-Expose-Headers`, `-Allow-Credentials` (with `credentials`),
 *   `-Allow-Private-Network` (with `privateNetwork`, when the preflight asks for it) and
 *   `Vary: Origin, Access-Control-Request-Headers` (and `Access-Control-Request-Private-Network`
 *   with `privateNetwork`); no `Content-Length`, which RFC 9110 §8.6 forbids on a 204.
 * - Any other request from an allowed origin (an `OPTIONS` without
 *   `Access-Control-Request-Method` included: an actual request) is a `Passage` with
 *   `Access-Control-Allow-Origin`, `Access-Control-Expose-Headers`,
 *   `Access-Control-Allow-Credentials` (with `credentials`) and `Vary: Origin`.
 * - A request without `Origin` (not a CORS request) or from another origin is a `Passage` with
 *   `Vary: Origin` only, since the answer differs by origin (RFC 9110 §12.5.5); a preflight from
 *   another origin goes on to the routes (its `OPTIONS` answer carries no permission). A refused
 *   origin, and a private-network preflight refused, are published on `svc:negotiate`
 *   (`cross-origin-refused`).
 *
 * The framework adapters apply it: `crossOrigin()` (Express, `(req, res, next)`), and
 * `crossOrigin()` of `@svc/negotiate/node`, `/fastify` and `/fetch`. Options are checked here:
 * refusals are `TypeError`s with `code` `ERR_SVC_NEGOTIATE_ORIGINS`,
 * `ERR_SVC_NEGOTIATE_CREDENTIALS`, `ERR_SVC_NEGOTIATE_PRIVATE_NETWORK`,
 * `ERR_SVC_NEGOTIATE_EXPOSED_HEADERS` or `ERR_SVC_NEGOTIATE_MAX_AGE`.
 *
 * @example
 * const gate = crossOriginGate({ origins: ["https://app.example"] });
 * gate({ method: "GET", headers: { origin: "https://app.example" } });
 * // { fields: { "Access-Control-Allow-Origin": "https://app.example" }, vary: ["Origin"] }
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 * @see https://fetch.spec.whatwg.org/#cors-protocol-and-credentials
 * @see https://wicg.github.io/private-network-access/#cors-preflight
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function crossOriginGate(
  options: CrossOriginOptions,
): (view: RequestView, native?: unknown) => Passage | Answer | Promise<Passage | Answer> {
  if (options === undefined) {
    throw optionError(
      "options",
      "crossOrigin: options must be an object { origins, credentials?, privateNetwork?, exposedHeaders?, maxAge? }, got undefined",
    );
  }
  checkOptionNames(
    "negotiate",
    options,
    ["origins", "credentials", "privateNetwork", "exposedHeaders", "maxAge"],
    "crossOrigin",
  );
  const credentials = resolveFlag("credentials", options.credentials);
  const privateNetwork = resolveFlag("privateNetwork", options.privateNetwork);
  const allowed = resolveOrigins(options.origins, credentials);
  const listed = resolveExposedHeaders(options.exposedHeaders);
  const named = new Set(listed.map((name) => name.toLowerCase()));
  const exposed = [...listed, ...AUTHENTICATION_FIELDS.filter((name) => !named.has(name.toLowerCase()))].join(
    ",",
  );
  const maxAge = resolveMaxAge(options.maxAge);
  // Fetch standard §3.2.5: a credentialed response names the origin and says
  // `Access-Control-Allow-Credentials: true` ("true" is the only valid value).
  const sharing: Record<string, string> = {
    ...(exposed === "" ? {} : { "Access-Control-Expose-Headers": exposed }),
    ...(credentials ? { "Access-Control-Allow-Credentials": "true" } : {}),
  };
  const notShared = Object.freeze({ vary: Object.freeze(["Origin"]) });
  const preflightVary = privateNetwork
    ? ["Origin", "Access-Control-Request-Headers", "Access-Control-Request-Private-Network"]
    : ["Origin", "Access-Control-Request-Headers"];

  function decide(view: RequestView, native: unknown, origin: string, ok: boolean): Passage | Answer {
    if (!ok) {
      if (negotiateChannel.hasSubscribers) publishCorsRefusal(native ?? view, origin, "origin");
      return notShared;
    }
    // §3.2.3: "Access-Control-Allow-Origin" is "*" or the request's origin; with credentials
    // never "*" (refused at construction), so the allowed origin is named.
    const allowOrigin = allowed.any ? "*" : origin;
    // Fetch standard §3.2.2: a CORS-preflight request "uses `OPTIONS` as method and includes"
    // `Access-Control-Request-Method`; an OPTIONS without it is an actual request
    // (fetch(url, { method: "OPTIONS" })), for its route.
    if (
      view.method?.toUpperCase() === "OPTIONS" &&
      view.headers["access-control-request-method"] !== undefined
    ) {
      const requested = view.headers["access-control-request-headers"];
      const headers = Array.isArray(requested) ? requested.join(",") : requested;
      // Private Network Access §3.1: a preflight for a more private address space carries
      // `Access-Control-Request-Private-Network: true`, and is granted by
      // `Access-Control-Allow-Private-Network: true`; it is sent only when asked, and enabled.
      const asksPrivate =
        String(view.headers["access-control-request-private-network"]).toLowerCase() === "true";
      if (asksPrivate && !privateNetwork && negotiateChannel.hasSubscribers) {
        publishCorsRefusal(native ?? view, origin, "private-network");
      }
      return {
        answer: {
          status: 204,
          fields: {
            "access-control-allow-origin": allowOrigin,
            "access-control-allow-methods": ALLOWED_METHODS,
            ...(headers === undefined || headers === "" ? {} : { "access-control-allow-headers": headers }),
            ...(maxAge === undefined ? {} : { "access-control-max-age": String(maxAge) }),
            ...(exposed === "" ? {} : { "access-control-expose-headers": exposed }),
            ...(credentials ? { "access-control-allow-credentials": "true" } : {}),
            ...(asksPrivate && privateNetwork ? { "access-control-allow-private-network": "true" } : {}),
          },
          vary: preflightVary,
          body: undefined,
        },
      };
    }
    // §3.2.3: the response to a CORS request names the origin it may be shared with.
    return { fields: { "Access-Control-Allow-Origin": allowOrigin, ...sharing }, vary: ["Origin"] };
  }

  return function crossOriginDecision(view: RequestView, native?: unknown) {
    const origin = view.headers.origin;
    if (typeof origin !== "string") return notShared;
    const ok = allowed.any || isAllowed(allowed, origin);
    return typeof ok === "boolean"
      ? decide(view, native, origin, ok)
      : ok.then((yes) => decide(view, native, origin, yes));
  };
}
