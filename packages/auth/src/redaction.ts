/**
 * What log lines show instead of a secret (pino's own default censor text).
 *
 * @example
 * expect(line).toContain(REDACTED);
 * @see https://getpino.io/#/docs/redaction
 */
export const REDACTED = "[Redacted]";

/**
 * Removes the values of `access_token` (and other credential-looking parameters) from a URL's
 * query, keeping the rest readable for the log.
 *
 * @example
 * redactUrl("/employees?access_token=eyJ...&page=2") // "/employees?access_token=[Redacted]&page=2"
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-5.3
 */
export function redactUrl(url: string): string {
  if (typeof url !== "string") return url;
  const q = url.indexOf("?");
  if (q === -1) return url;
  return (
    url.slice(0, q + 1) +
    url
      .slice(q + 1)
      .replace(
        /(^|[&;])((?:access_token|id_token|refresh_token|token|code|password|client_secret|api_key|apikey)(?:=|%3D))[^&;#]*/gi,
        `$1$2${REDACTED}`,
      )
  );
}

const URL_PATHS = new Set(["url", "originalUrl"]);

/**
 * pino `redact` settings that keep credentials out of the logs (spec part 5: tokens are never
 * logged): `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` headers in
 * pino-http's `req`/`res` and in bare `headers` objects, `access_token` fields, and the
 * `access_token` parameter inside logged URLs (`req.url`, `url`).
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
    "req.headers.cookie",
    'res.headers["set-cookie"]',
    "headers.authorization",
    'headers["proxy-authorization"]',
    "headers.cookie",
    'headers["set-cookie"]',
    "req.url",
    "req.originalUrl",
    "url",
    "req.query.access_token",
    "req.body.access_token",
    "access_token",
    "*.access_token",
    "password",
    "*.password",
  ],
  censor(value: unknown, path: string[]): unknown {
    const last = path[path.length - 1];
    if (last !== undefined && URL_PATHS.has(last) && typeof value === "string") return redactUrl(value);
    return REDACTED;
  },
};
