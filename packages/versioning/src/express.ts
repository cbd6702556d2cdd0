declare global {
  // Express declares its request type in this global namespace; this adds what the pipeline's
  // Express adapter (`expressAdapter(...).prepare` of @svc/kernel) sets from `versions()`.
  namespace Express {
    interface Request {
      /** The API version @svc/versioning resolved for this request. */
      apiVersion?: number | undefined;
      /** The `/v<N>` prefix stripped from the path, or `""`; see `versionedPath`. */
      apiVersionPrefix?: string | undefined;
    }
  }
}

/**
 * Puts the request's `/v<N>` prefix back in front of a path, so links in a response to
 * `/v2/employees` point at `/v2/...` and the client stays in its version; with the header or media
 * type strategy the path is returned unchanged (the version lives outside the URL). Compose it with
 * `hrefFor` of @svc/hal. Takes a request the pipeline's `prepare` has seen (`req.apiVersionPrefix`),
 * or a decision's `prefix` as `{ apiVersionPrefix }`.
 *
 * @example hrefFor(req, versionedPath(req, `/employees/${id}`)) // ".../v2/employees/7" for /v2 requests
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function versionedPath(req: { apiVersionPrefix?: string | undefined }, path: string): string {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new TypeError(`versionedPath: path must start with "/", got ${String(path)}`);
  }
  return `${req.apiVersionPrefix ?? ""}${path}`;
}
