/**
 * What log lines show instead of a secret (pino's own default censor text).
 *
 * @example
 * expect(line).toContain(REDACTED);
 * @see https://getpino.io/#/docs/redaction
 */
export const REDACTED = "[Redacted]";

/** Query parameters whose values are credentials, compared after percent-decoding and lower-casing. */
const SECRET_PARAMS = new Set([
  "access_token",
  "id_token",
  "refresh_token",
  "token",
  "code",
  "password",
  "client_secret",
  "api_key",
  "apikey",
]);

function decodeComponent(raw: string): string {
  const spaced = raw.replace(/\+/g, " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Malformed elsewhere in the component: decode what can be decoded, byte by byte.
    return spaced.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
}

/**
 * The name of a query parameter as a server would read it: percent-decoded (`access%5Ftoken` is
 * `access_token`), lower-cased, without a `[]` suffix, and cut at an encoded `=` (`%3D`).
 */
function parameterName(part: string): string {
  const name = decodedName(part);
  // Cut at the first `[` by index: `/\[.*$/` on client input backtracked quadratically on `[`
  // runs followed by a line break (15,000 of them in a query cost 400 ms per request), and did
  // not cut `access_token[\n]` at all.
  const bracket = name.indexOf("[");
  return bracket === -1 ? name : name.slice(0, bracket);
}

/** A raw `name=value` part's name, percent-decoded, trimmed and lower-cased (brackets kept). */
function decodedName(part: string): string {
  const decoded = decodeComponent(part);
  const eq = decoded.indexOf("=");
  return (eq === -1 ? decoded : decoded.slice(0, eq)).trim().toLowerCase();
}

/**
 * Whether a parameter name, or any of its bracketed parts (`a[password]`, `token[x]`: how qs and
 * PHP-style parsers nest), is a credential name. One split on `[`/`]`, linear in the name.
 */
function isSecretName(name: string): boolean {
  const lower = name.toLowerCase();
  if (SECRET_PARAMS.has(lower.trim())) return true;
  if (!lower.includes("[")) return false;
  return lower.split(/[[\]]/).some((segment) => SECRET_PARAMS.has(segment.trim()));
}

/** Where the value of a raw `name=value` (or `name%3Dvalue`) part starts, or -1. */
function valueStart(part: string): number {
  const m = /=|%3d/i.exec(part);
  return m === null ? -1 : m.index + m[0].length;
}

/** True when a raw query (without `?`) names `access_token` in any spelling a server would decode (RFC 6750 §2.3). */
export function queryNamesAccessToken(query: string): boolean {
  return query.split(/[&;]/).some((part) => part !== "" && parameterName(part) === "access_token");
}

/**
 * Removes the values of `access_token` (and other credential-looking parameters) from a URL's
 * query, keeping the rest readable for the log. Names are matched as a server decodes them, so
 * `access%5Ftoken=` or `ACCESS_TOKEN=` are censored too.
 *
 * @example
 * redactUrl("/employees?access_token=eyJ...&page=2") // "/employees?access_token=[Redacted]&page=2"
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-5.3
 */
export function redactUrl(url: string): string {
  if (typeof url !== "string") return url;
  const q = url.indexOf("?");
  if (q === -1) return url;
  const query = url
    .slice(q + 1)
    .split(/([&;])/)
    .map((part) => {
      if (part === "&" || part === ";" || !isSecretName(decodedName(part))) return part;
      const at = valueStart(part);
      return at === -1 ? part : `${part.slice(0, at)}${REDACTED}`;
    })
    .join("");
  return url.slice(0, q + 1) + query;
}

/**
 * Keys whose string values are request URLs: pino-http's `req.url` / `req.originalUrl`, a bare
 * `url`, and `path`, under which `@svc/errors`' `errorHandler` logs the request-target of a failed
 * request (query string included). Only a `?…` query is touched: any other `path` passes unchanged.
 */
const URL_PATHS = new Set(["url", "originalUrl", "path"]);

/** Deeper than any query parser nests (qs stops at 5): below it, everything is censored. */
const MAX_QUERY_DEPTH = 20;

/**
 * A copy of a parsed query (`req.query`) with the values of credential parameters censored, at any
 * depth (`a[password]=` parses to `{ a: { password } }` with qs, to `{ "a[password]": ... }` with
 * the simple parser): the same names {@link redactUrl} censors in the URL. Never mutates `value`.
 */
function redactQuery(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_QUERY_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactQuery(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty: a `__proto__` key (qs and querystring both make one) stays a plain member.
    Object.defineProperty(copy, key, {
      value: isSecretName(key) ? REDACTED : redactQuery(item, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/**
 * pino `redact` settings that keep credentials out of the logs (a bearer token grants access to
 * whoever holds it, RFC 6750 §5, so it never reaches a log): `Authorization`, `Proxy-Authorization`,
 * `DPoP`, `Cookie` and `Set-Cookie` headers in pino-http's `req`/`res` and in bare `headers` objects, `access_token` fields, and the
 * `access_token` parameter (and the other credential parameters) inside logged URLs (`req.url`,
 * `url`, and `path`, where `errorHandler()` of `@svc/errors` logs the request-target) and in the
 * parsed query pino-http logs with them (`req.query`).
 *
 * @example
 * const logger = pino({ redact: pinoRedaction });
 * app.use(pinoHttp({ logger }));
 * @see https://getpino.io/#/docs/redaction
 */
export const pinoRedaction: {
  readonly paths: string[];
  readonly censor: (value: unknown, path: string[]) => unknown;
} = {
  paths: [
    "req.headers.authorization",
    'req.headers["proxy-authorization"]',
    // A DPoP proof passes again in its window wherever its jti was not claimed (a 503, another instance).
    // @see https://www.rfc-editor.org/rfc/rfc9449#section-11.1
    "req.headers.dpop",
    "req.headers.cookie",
    'res.headers["set-cookie"]',
    "headers.authorization",
    'headers["proxy-authorization"]',
    "headers.dpop",
    "headers.cookie",
    'headers["set-cookie"]',
    "req.url",
    "req.originalUrl",
    "url",
    // errorHandler's line for a 5xx (and for headers it had to drop): `{ err, status, method, path }`.
    "path",
    // The whole parsed query: pino-http's request serializer logs `req.query` next to `req.url`,
    // and the censor below blanks the same credential parameters there as in the URL.
    "req.query",
    "req.body.access_token",
    "access_token",
    "*.access_token",
    "password",
    "*.password",
  ],
  censor(value: unknown, path: string[]): unknown {
    const last = path[path.length - 1];
    if (last !== undefined && URL_PATHS.has(last) && typeof value === "string") return redactUrl(value);
    // A `path` that is no URL string (a validation error's field path) is another log's data.
    if (last === "path") return value;
    if (last === "query" && path.length === 2)
      // A raw query string (a logger of node:http requests) is censored as the URL's query is.
      return typeof value === "string" ? redactUrl(`?${value}`).slice(1) : redactQuery(value, 0);
    return REDACTED;
  },
};
