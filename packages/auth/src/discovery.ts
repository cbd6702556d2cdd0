import type { JWTVerifyGetKey } from "jose";
import { checkOptions, nonNegativeNumber, optionError, timeoutMilliseconds } from "./options.js";
import { type ReloadableKeySource, type RemoteJwksConfig, readBody, remoteKeySet } from "./remote-jwks.js";

/**
 * The `fetch` discovery and the JWKS download use: the global `fetch` by default; give one for a
 * proxy, a private CA or a test. It is called with `redirect: "error"` and an abort signal.
 */
export type DiscoveryFetch = (
  url: string,
  init: {
    headers: Headers | Record<string, string>;
    method: string;
    redirect: "error" | "follow" | "manual";
    signal: AbortSignal;
  },
) => Promise<Response>;

/** Settings of the issuer metadata download (`bearer.issuerBaseURL`). */
export interface DiscoveryOptions {
  /**
   * Milliseconds before a metadata download is abandoned (headers and body together): a whole
   * number from 1 to 2^31 - 1 (what `AbortSignal.timeout` keeps).
   * @default 5000
   */
  timeoutDuration?: number;
  /**
   * Largest metadata document read, in bytes; a larger one is refused without being read whole.
   * @default 65536
   */
  maxBytes?: number;
  /**
   * Milliseconds the discovered metadata is used before it is fetched again. A refresh happens in
   * the background: requests go on with the metadata they have, and keep it if the refresh fails.
   * `0`: every request that needs the keys starts a background refresh (one at a time).
   * @default 600000
   */
  cacheMaxAge?: number;
  /**
   * Milliseconds after a failed download during which no other download is tried: requests in
   * that window fail at once (503), so an issuer outage is not met with one download per request.
   * @default 30000
   */
  cooldownDuration?: number;
  /**
   * The `fetch` used for the metadata and the JWKS.
   * @default globalThis.fetch
   */
  fetch?: DiscoveryFetch;
}

/** Why issuer discovery failed; `code` is for logs and alerts, never for the client. */
export type DiscoveryErrorCode =
  | "ERR_DISCOVERY_FETCH"
  | "ERR_DISCOVERY_STATUS"
  | "ERR_DISCOVERY_TOO_LARGE"
  | "ERR_DISCOVERY_INVALID_JSON"
  | "ERR_DISCOVERY_ISSUER_MISMATCH"
  | "ERR_DISCOVERY_JWKS_URI"
  | "ERR_DISCOVERY_INSECURE_JWKS_URI";

/**
 * The issuer's metadata could not be obtained or is not acceptable. It reaches the caller as the
 * `cause` of a `KeySourceUnavailableError` (a 503 from `authenticate`), with the network error,
 * if any, as its own `cause`.
 *
 * @example
 * if (err.cause instanceof DiscoveryError) log.error({ code: err.cause.code, url: err.cause.url });
 * @see https://openid.net/specs/openid-connect-discovery-1_0.html#ProviderConfig
 */
export class DiscoveryError extends Error {
  readonly code: DiscoveryErrorCode;
  /** The metadata URL that was read. */
  readonly url: string;
  constructor(code: DiscoveryErrorCode, url: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DiscoveryError";
    this.code = code;
    this.url = url;
  }
}

/** The members of an issuer's metadata this package reads; the others are kept as they came. */
export interface IssuerMetadata {
  /** OpenID Connect Discovery 1.0 §3 / RFC 8414 §2: `issuer`. */
  issuer: string;
  /** OpenID Connect Discovery 1.0 §3 / RFC 8414 §2: `jwks_uri`. */
  jwks_uri: string;
  [member: string]: unknown;
}

/** {@link DiscoveryOptions} resolved; `allowHttp` from the Bearer options. */
export interface DiscoveryConfig {
  timeoutDuration: number;
  maxBytes: number;
  cacheMaxAge: number;
  cooldownDuration: number;
  fetch: DiscoveryFetch | undefined;
  allowHttp: boolean;
}

export const DISCOVERY_DEFAULTS = {
  timeoutDuration: 5000,
  maxBytes: 65_536,
  cacheMaxAge: 600_000,
  cooldownDuration: 30_000,
} as const;

/**
 * The metadata URLs of an issuer, in the order they are tried.
 *
 * OpenID Connect Discovery 1.0 §4: "the Issuer ... MUST make a JSON document available at the path
 * formed by concatenating the string /.well-known/openid-configuration to the Issuer", any
 * terminating "/" removed first. RFC 8414 §3.1: "/.well-known/oauth-authorization-server" is
 * inserted "between the host component and the path component, if any".
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  const origin = url.origin;
  return [
    `${origin}${path}/.well-known/openid-configuration`,
    `${origin}/.well-known/oauth-authorization-server${path}`,
  ];
}

/**
 * Whether `url` can be an issuer identifier. RFC 8414 §2: "a URL that uses the "https" scheme and
 * has no query or fragment components"; OpenID Connect Core 1.0 §1.2: it "contains scheme, host,
 * and optionally, port number and path components", so no user info either. The metadata URLs
 * ({@link metadataUrls}) are built from those parts alone: with anything else the issuer named in
 * the metadata could never be identical to it (OIDC Discovery §4.3), and every token a 503.
 * Serialized, `?` and `#` only ever start a query or a fragment (an empty one too).
 */
export function isIssuerIdentifier(url: URL): boolean {
  return !url.href.includes("?") && !url.href.includes("#") && url.username === "" && url.password === "";
}

function fetchOf(config: Pick<DiscoveryConfig, "fetch">): DiscoveryFetch {
  return config.fetch ?? ((url, init) => fetch(url, init));
}

// Malformed sequences become U+FFFD and a leading BOM stays, for JSON.parse to refuse.
const LENIENT_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** The body, read up to `maxBytes` (checked on `Content-Length` first, then while reading). */
async function readBounded(response: Response, maxBytes: number, url: string): Promise<string> {
  const tooLarge = () =>
    new DiscoveryError("ERR_DISCOVERY_TOO_LARGE", url, `The issuer metadata is over ${maxBytes} bytes`);
  return LENIENT_UTF8.decode(await readBody(response, maxBytes, tooLarge));
}

/** One metadata URL fetched; `undefined` on 404 (the next URL form is then tried). */
async function fetchDocument(url: string, config: DiscoveryConfig): Promise<unknown> {
  let response: Response;
  try {
    response = await fetchOf(config)(url, {
      method: "GET",
      headers: { accept: "application/json" },
      // A redirect could lead from https to http; metadata is served where it is looked for.
      redirect: "error",
      signal: AbortSignal.timeout(config.timeoutDuration),
    });
  } catch (cause) {
    throw new DiscoveryError("ERR_DISCOVERY_FETCH", url, "The issuer metadata could not be fetched", {
      cause,
    });
  }
  if (response.status === 404) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  // OpenID Connect Discovery 1.0 §4.2: "A successful response MUST use the 200 OK HTTP status code".
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    throw new DiscoveryError(
      "ERR_DISCOVERY_STATUS",
      url,
      `The issuer metadata answered ${response.status}, not 200`,
    );
  }
  let text: string;
  try {
    text = await readBounded(response, config.maxBytes, url);
  } catch (cause) {
    if (cause instanceof DiscoveryError) throw cause;
    throw new DiscoveryError("ERR_DISCOVERY_FETCH", url, "The issuer metadata could not be read", {
      cause,
    });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DiscoveryError("ERR_DISCOVERY_INVALID_JSON", url, "The issuer metadata is not JSON", {
      cause,
    });
  }
}

/** The document checked: an object whose `issuer` is the configured one and whose `jwks_uri` is usable. */
function checkMetadata(document: unknown, issuer: string, url: string, allowHttp: boolean): IssuerMetadata {
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw new DiscoveryError("ERR_DISCOVERY_INVALID_JSON", url, "The issuer metadata is not a JSON object");
  }
  const metadata = document as Record<string, unknown>;
  // OpenID Connect Discovery 1.0 §4.3: "The issuer value returned MUST be identical to the Issuer
  // URL that was used as the prefix to /.well-known/openid-configuration"; RFC 8414 §3.3 likewise.
  if (metadata.issuer !== issuer) {
    throw new DiscoveryError(
      "ERR_DISCOVERY_ISSUER_MISMATCH",
      url,
      `The issuer metadata names issuer ${JSON.stringify(metadata.issuer)}, not ${JSON.stringify(issuer)}`,
    );
  }
  const jwksUri = metadata.jwks_uri;
  let parsed: URL | undefined;
  try {
    parsed = typeof jwksUri === "string" ? new URL(jwksUri) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    throw new DiscoveryError("ERR_DISCOVERY_JWKS_URI", url, "The issuer metadata has no usable jwks_uri");
  }
  // OpenID Connect Discovery 1.0 §3: jwks_uri "REQUIRED. URL of the OP's JSON Web Key Set"; RFC 8414
  // §2 and OIDC Discovery §7 ask for TLS: an http: key set can be swapped by anyone on the path.
  if (parsed.protocol === "http:" && !allowHttp) {
    throw new DiscoveryError(
      "ERR_DISCOVERY_INSECURE_JWKS_URI",
      url,
      `The issuer metadata's jwks_uri ${JSON.stringify(jwksUri)} is not https (allowHttp is off)`,
    );
  }
  return metadata as IssuerMetadata;
}

/** The discovery settings given to {@link discoverIssuer}. */
export interface DiscoverIssuerOptions
  extends Pick<DiscoveryOptions, "timeoutDuration" | "maxBytes" | "fetch"> {
  /**
   * Accept an `http:` `jwks_uri` (loopback and development issuers only).
   * @default false
   */
  allowHttp?: boolean;
}

/**
 * Fetches and checks an issuer's metadata: `${issuer}/.well-known/openid-configuration` (OpenID
 * Connect Discovery 1.0 §4), then, on 404, the RFC 8414 §3 form. The `issuer` it names must be
 * identical to the one given, and `jwks_uri` must be https (unless `allowHttp`). Rejects with
 * {@link DiscoveryError}.
 *
 * @example
 * const { jwks_uri } = await discoverIssuer("https://issuer.example/");
 * @see https://openid.net/specs/openid-connect-discovery-1_0.html#ProviderConfig
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-3
 */
export async function discoverIssuer(
  issuer: string,
  options: DiscoverIssuerOptions = {},
): Promise<IssuerMetadata> {
  if (typeof issuer !== "string" || !URL.canParse(issuer) || !isIssuerIdentifier(new URL(issuer)))
    throw optionError(
      "discoverIssuer.issuer",
      issuer,
      "an absolute URL string without query, fragment or user info (RFC 8414 §2)",
    );
  checkOptions(
    options,
    DISCOVER_ISSUER_OPTIONS,
    "discoverIssuer",
    "an object { timeoutDuration?, maxBytes?, fetch?, allowHttp? }",
  );
  const allowHttp = options.allowHttp ?? false;
  if (typeof allowHttp !== "boolean")
    throw optionError("discoverIssuer.allowHttp", allowHttp, "true or false");
  const { allowHttp: _, ...settings } = options;
  return fetchMetadata(issuer, discoverySettings(settings, allowHttp, "discoverIssuer"));
}

async function fetchMetadata(issuer: string, config: DiscoveryConfig): Promise<IssuerMetadata> {
  const urls = metadataUrls(issuer);
  for (const url of urls) {
    const document = await fetchDocument(url, config);
    if (document !== undefined) return checkMetadata(document, issuer, url, config.allowHttp);
  }
  throw new DiscoveryError(
    "ERR_DISCOVERY_STATUS",
    urls[0] ?? issuer,
    "The issuer publishes no metadata (404 at every well-known URL)",
  );
}

/** What a discovered key source needs from the Bearer configuration. */
export interface DiscoveredKeysOptions {
  issuer: string;
  discovery: DiscoveryConfig;
  /** The remote JWKS settings (jose's, and the failure cool-down of its downloads). */
  jwks: RemoteJwksConfig;
  now: () => number;
  /** Called once per verifier when a discovered `jwks_uri` is `http:` (allowed by `allowHttp`). */
  onInsecureJwks: (jwksUri: string) => void;
  /**
   * Wraps a discovery or JWKS failure for the verifier (a `KeySourceUnavailableError`), with the
   * seconds until the next download is tried when known.
   */
  unavailable: (cause: unknown, retryAfter?: number) => Error;
}

interface Discovered {
  jwksUri: string;
  getKey: ReloadableKeySource;
  fetchedAt: number;
}

/**
 * A key source that discovers the issuer's `jwks_uri` on first use and then reads keys from it.
 * One download at a time (concurrent requests share it), stale metadata served while a refresh
 * runs, and after a failure a cooldown during which requests fail without a download.
 */
export function discoveredKeySource(options: DiscoveredKeysOptions): ReloadableKeySource {
  const { discovery, now } = options;
  let current: Discovered | undefined;
  let inflight: Promise<Discovered> | undefined;
  let failure: { error: unknown; at: number } | undefined;
  let warned = false;

  const refresh = (): Promise<Discovered> => {
    inflight ??= fetchMetadata(options.issuer, discovery)
      .then((metadata) => {
        failure = undefined;
        if (current && current.jwksUri === metadata.jwks_uri) {
          current.fetchedAt = now();
          return current;
        }
        if (metadata.jwks_uri.startsWith("http:") && !warned) {
          warned = true;
          options.onInsecureJwks(metadata.jwks_uri);
        }
        const remote = remoteKeySet(new URL(metadata.jwks_uri), {
          jwks: options.jwks,
          fetch: discovery.fetch,
          now,
          unavailable: options.unavailable,
        });
        current = { jwksUri: metadata.jwks_uri, getKey: remote, fetchedAt: now() };
        return current;
      })
      .catch((error: unknown) => {
        failure = { error, at: now() };
        throw error;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  const resolve = async (): Promise<Discovered> => {
    const t = now();
    const fresh = current !== undefined && t - current.fetchedAt < discovery.cacheMaxAge;
    const cooling = failure !== undefined && t - failure.at < discovery.cooldownDuration;
    if (current && (fresh || cooling || inflight)) return current;
    if (current) {
      // Stale: refresh in the background, keep serving what is known.
      refresh().catch(() => {});
      return current;
    }
    if (cooling && !inflight) throw options.unavailable(failure?.error, secondsLeft());
    try {
      return await refresh();
    } catch (error) {
      throw options.unavailable(error, secondsLeft());
    }
  };

  // RFC 9110 §10.2.3: Retry-After says "how long the user agent ought to wait before making a
  // follow-up request": the rest of the cooldown, in whole seconds; none known without one.
  const secondsLeft = (): number | undefined => {
    const left = failure === undefined ? 0 : failure.at + discovery.cooldownDuration - now();
    return left > 0 ? Math.ceil(left / 1000) : undefined;
  };

  const getKey: JWTVerifyGetKey = async (header, token) => {
    const { getKey } = await resolve();
    return getKey(header, token);
  };
  // The discovered key set is downloaded again (a jwks_uri discovered later starts fresh anyway).
  return Object.assign(getKey, { invalidate: () => current?.getKey.invalidate() });
}

const DISCOVERY_OPTIONS = Object.keys({
  timeoutDuration: 0,
  maxBytes: 0,
  cacheMaxAge: 0,
  cooldownDuration: 0,
  fetch: 0,
} satisfies Record<keyof DiscoveryOptions, 0>);

const DISCOVER_ISSUER_OPTIONS = Object.keys({
  timeoutDuration: 0,
  maxBytes: 0,
  fetch: 0,
  allowHttp: 0,
} satisfies Record<keyof DiscoverIssuerOptions, 0>);

/** Discovery settings, each checked; refusals are named `<option>.<setting>`. */
export function discoverySettings(
  options: DiscoveryOptions | undefined,
  allowHttp: boolean,
  option: string,
): DiscoveryConfig {
  if (options !== undefined)
    checkOptions(
      options,
      DISCOVERY_OPTIONS,
      option,
      "an object { timeoutDuration?, maxBytes?, cacheMaxAge?, cooldownDuration?, fetch? }",
    );
  const given = options ?? {};
  const fetch = given.fetch;
  if (fetch !== undefined && typeof fetch !== "function")
    throw optionError(`${option}.fetch`, fetch, "a fetch-like function (url, init) => Promise<Response>");
  const maxBytes = given.maxBytes ?? DISCOVERY_DEFAULTS.maxBytes;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw optionError(`${option}.maxBytes`, maxBytes, "a positive integer");
  return {
    timeoutDuration: timeoutMilliseconds(
      given.timeoutDuration ?? DISCOVERY_DEFAULTS.timeoutDuration,
      `${option}.timeoutDuration`,
    ),
    maxBytes,
    cacheMaxAge: nonNegativeNumber(
      given.cacheMaxAge ?? DISCOVERY_DEFAULTS.cacheMaxAge,
      `${option}.cacheMaxAge`,
      "milliseconds",
    ),
    cooldownDuration: nonNegativeNumber(
      given.cooldownDuration ?? DISCOVERY_DEFAULTS.cooldownDuration,
      `${option}.cooldownDuration`,
      "milliseconds",
    ),
    fetch,
    allowHttp,
  };
}
