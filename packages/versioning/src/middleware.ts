import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { createVersioning } from "./core.js";
import type { ApiVersioningOptions, VersionResolution } from "./options.js";

declare global {
  // Express declares its request type in this global namespace; this adds req.apiVersion to it.
  namespace Express {
    interface Request {
      /** The API version @svc/versioning resolved for this request. */
      apiVersion?: number | undefined;
      /** The `/v<N>` prefix stripped from the path, or `""`; see `versionedPath`. */
      apiVersionPrefix?: string | undefined;
    }
  }
}

/** The parts of an Express (or plain `node:http`) request the middleware reads and writes. */
export interface VersioningRequest extends IncomingMessage {
  /** The resolved version; undefined on a version-neutral path that named none and has no default. */
  apiVersion?: number | undefined;
  /** The `/v<N>` prefix stripped from the path, or `""`. */
  apiVersionPrefix?: string | undefined;
  originalUrl?: string;
  /** Express: the application, for its `case sensitive routing` setting (see the `routing` option). */
  app?: { get(setting: string): unknown } | undefined;
}

/**
 * API versioning middleware with three strategies, each switchable:
 *
 * - **URI**: `/v2/employees` is routed as `/employees` (the prefix is stripped before routing, so
 *   routes are mounted once; `req.originalUrl` keeps it). Unknown version → 404.
 * - **Header**: `API-Version: 2` or `Accept-Version: 2` (names configurable). Unknown → 400.
 * - **Media type**: `Accept: application/vnd.<vendor>.v2+json` (or `+xml`); the response's
 *   Content-Type is set to that vendor type before the handler runs (a `+xml` one becomes the
 *   version's `+json` type if the handler answers with `res.json`). Unknown → 406. A request with
 *   content sent as `Content-Type: application/vnd.<vendor>.v2+json` names version 2 too (RFC 9110
 *   §8.3: the type of the enclosed representation); an unknown version there → 415.
 *
 * A request that names no version gets the default (or 400 when `required`); strategies naming
 * different versions → 400; an `Accept` that takes no representation of the version the path, a
 * header or the content's type named → 406 (RFC 9110 §15.5.7). Every response, errors included, carries `API-Supported-Versions` and
 * (when any) `API-Deprecated-Versions`; responses for a deprecated version carry `Deprecation`
 * (RFC 9745), `Sunset` (RFC 8594) and their `Link`s. `Vary` names the headers the decision
 * depended on. Failures go to `next(err)` as `HttpError`s. The decision is {@link createVersioning}'s;
 * this adapter only moves it onto the request (`req.url`, `req.apiVersion`, `req.apiVersionPrefix`,
 * `res.locals.apiVersion`).
 *
 * @example
 * app.use(apiVersioning({
 *   versions: [1, 2],
 *   defaultVersion: 1,
 *   mediaType: { vendor: "svc" },
 *   deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z", link: "https://docs.example.com/v1" } },
 *   neutral: ["/health"],
 * }));
 * app.get("/employees", versioned({ 1: listV1, 2: listV2 }));
 * @see https://www.rfc-editor.org/rfc/rfc6838#section-3.2
 * @see https://www.rfc-editor.org/rfc/rfc9745
 * @see https://www.rfc-editor.org/rfc/rfc8594
 */
export function apiVersioning(options: ApiVersioningOptions) {
  const versioning = createVersioning(options);

  return function svcApiVersioning(req: VersioningRequest, res: ServerResponse, next: NextFunction): void {
    let resolution: VersionResolution;
    try {
      resolution = versioning.resolve(req);
    } catch (err) {
      // Set before the error handler runs, so its response keeps them.
      versioning.writeHeaders(res);
      next(err);
      return;
    }
    versioning.writeHeaders(res, resolution);
    if (resolution.mediaType?.endsWith(XML_SUFFIX)) relabelJson(res, resolution.mediaType);
    req.url = resolution.url;
    req.apiVersion = resolution.version;
    req.apiVersionPrefix = resolution.pathPrefix;
    const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
    if (locals) locals.apiVersion = resolution.version;
    next();
  };
}

const XML_SUFFIX = "+xml";
const ORIGINAL_JSON = Symbol("@svc/versioning res.json");
const ORIGINAL_JSONP = Symbol("@svc/versioning res.jsonp");
const XML_LABEL = Symbol("@svc/versioning +xml label");

type JsonResponse = ServerResponse & {
  json?: (...args: unknown[]) => unknown;
  jsonp?: (...args: unknown[]) => unknown;
  [ORIGINAL_JSON]?: (...args: unknown[]) => unknown;
  [ORIGINAL_JSONP]?: (...args: unknown[]) => unknown;
  [XML_LABEL]?: string;
};

/**
 * A response labelled with a vendor `+xml` type whose handler answers with Express's `res.json`
 * (or `res.send` of an object, which calls it, or `res.jsonp`) gets the version's `+json` type instead: the body
 * is JSON, and RFC 9110 §12.1 lets a server disregard `Accept` and send a representation the client
 * did not ask for, but never mislabel one (§8.3: Content-Type names the representation's media
 * type). A handler that writes XML, or sets its own type, keeps it. Only `+xml` responses are
 * wrapped, only where the response has Express's `json`, with one shared wrapper (the label and
 * Express's `json` travel on the response).
 */
function relabelJson(res: ServerResponse, xmlType: string): void {
  const target = res as JsonResponse;
  const json = target.json;
  // Mounted twice, the wrapper is already in place (wrapping itself would recurse).
  if (typeof json !== "function" || json === jsonUnderJsonLabel) return;
  target[ORIGINAL_JSON] = json;
  target[XML_LABEL] = xmlType;
  target.json = jsonUnderJsonLabel;
  // Express's `res.jsonp` sends its JSON through `res.send`, not `res.json`, and keeps a
  // Content-Type already set: without a callback it too sent JSON under the `+xml` label.
  const jsonp = target.jsonp;
  if (typeof jsonp === "function") {
    target[ORIGINAL_JSONP] = jsonp;
    target.jsonp = jsonpUnderJsonLabel;
  }
}

function relabelAsJson(res: JsonResponse): void {
  const xmlType = res[XML_LABEL] as string;
  if (res.getHeader("Content-Type") === xmlType) {
    res.setHeader("Content-Type", `${xmlType.slice(0, -XML_SUFFIX.length)}+json`);
  }
}

function jsonUnderJsonLabel(this: JsonResponse, ...args: unknown[]): unknown {
  relabelAsJson(this);
  // All the arguments: Express 4 still takes the deprecated `res.json(status, body)`.
  return (this[ORIGINAL_JSON] as (...args: unknown[]) => unknown).apply(this, args);
}

function jsonpUnderJsonLabel(this: JsonResponse, ...args: unknown[]): unknown {
  // With a callback Express sets `text/javascript` itself; without one the body is JSON.
  relabelAsJson(this);
  return (this[ORIGINAL_JSONP] as (...args: unknown[]) => unknown).apply(this, args);
}

/**
 * Puts the request's `/v<N>` prefix back in front of a path, so links in a response to
 * `/v2/employees` point at `/v2/...` and the client stays in its version; with the header or media
 * type strategy the path is returned unchanged (the version lives outside the URL). Compose it with
 * `hrefFor` of @svc/hal. Takes a request `apiVersioning` has seen, or a {@link VersionResolution}'s
 * `pathPrefix` as `{ apiVersionPrefix }`.
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
