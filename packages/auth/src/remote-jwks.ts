import { publishDecision } from "@svc/kernel/internal";
import { createRemoteJWKSet, customFetch, type FetchImplementation, type JWTVerifyGetKey } from "jose";
import { concatBytes } from "./bytes.js";
import { authChannel, jwksFetches } from "./diagnostics.js";

/** jose's remote JWKS settings plus the failure cool-down, resolved (see `RemoteJwksOptions`). */
export interface RemoteJwksConfig {
  cacheMaxAge?: number;
  cooldownDuration?: number;
  timeoutDuration?: number;
  failureCooldownDuration: number;
  maxBytes: number;
}

/**
 * Largest JWKS read, in bytes, by default: a key set of a few keys is a few KiB, x5c chains
 * included, so this leaves room for many, and bounds the memory one download can take (jose reads
 * the whole body before parsing it).
 */
export const JWKS_MAX_BYTES_DEFAULT = 262_144;

/** A key set download larger than `jwksOptions.maxBytes`: refused without being read whole. */
class JwksTooLargeError extends Error {
  readonly code = "ERR_JWKS_TOO_LARGE";
  constructor(maxBytes: number) {
    super(`The JSON Web Key Set is over ${maxBytes} bytes`);
    this.name = "JwksTooLargeError";
  }
}

/**
 * The body of `response`, read up to `maxBytes`: checked on `Content-Length` first, then while
 * reading, so a larger body is never held whole. `tooLarge` makes the error for a larger one.
 */
export async function readBody(
  response: Response,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return concatBytes(chunks);
}

/**
 * A 200's body read within `maxBytes` and handed to jose as a new response: jose's
 * `response.json()` reads any size into memory. Another status goes through, for jose to refuse,
 * with its body cancelled: jose refuses it unread, and an unread body keeps its connection busy
 * (undici frees the socket only once the body is read or cancelled), so a key server answering
 * errors with large pages would take one more connection per download.
 */
async function boundedResponse(response: Response, maxBytes: number): Promise<Response> {
  if (response.status !== 200) {
    // RFC 9112 §9.3: "In order to remain persistent, all messages on a connection need to have a
    // self-defined message length": the connection carries the next response only once this one
    // is read to its end. Cancelling discards it (undici closes the connection, or reuses it if
    // the body had all arrived) instead of holding it open until the response is collected.
    await response.body?.cancel().catch(() => {});
    return response;
  }
  const body = await readBody(response, maxBytes, () => new JwksTooLargeError(maxBytes));
  return new Response(body, { status: 200, headers: response.headers });
}

/**
 * Milliseconds without a JWKS download after a failed one. Short enough that a recovered key
 * server is noticed within seconds, long enough that an outage costs the key server one request
 * per window from each process rather than one per incoming request (jwks-rsa's rate limit
 * defaults to 10 downloads a minute; jose has no failure back-off of its own).
 */
export const FAILURE_COOLDOWN_DEFAULT = 5000;

// jose's codes for a JWKS that could not be obtained or parsed; token-caused failures
// (no matching key, unsupported key type) keep their own codes and stay a 401.
const UNAVAILABLE_CODES = new Set([
  "ERR_JWKS_TIMEOUT",
  "ERR_JWKS_INVALID",
  "ERR_JOSE_GENERIC",
  "ERR_JWKS_TOO_LARGE",
]);

/**
 * Whether an error from a remote key set means the keys could not be had (network error, timeout,
 * a status other than 200, a body that is no JWKS) rather than that the token is wrong.
 */
export function isKeySourceFailure(err: unknown): boolean {
  const code = typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined;
  return code === undefined || !code.startsWith("ERR_") || UNAVAILABLE_CODES.has(code);
}

/**
 * A remote key source whose key set can be forgotten: after `invalidate()` the next verification
 * downloads the key set again before any key is used.
 */
export type ReloadableKeySource = JWTVerifyGetKey & { invalidate(): void };

/** Thrown by the gated fetch inside a failure cool-down: no download was tried. */
class CoolingDown extends Error {}

/** What {@link remoteKeySet} needs besides the URL. */
export interface RemoteKeySetOptions {
  jwks: RemoteJwksConfig;
  /** The `fetch` the download uses (discovery's `fetch` option); the global one by default. */
  fetch?: FetchImplementation | undefined;
  /** The verifier's clock, in milliseconds. */
  now: () => number;
  /** The error a request gets when the keys cannot be had: `retryAfter` seconds until the next try. */
  unavailable: (cause: unknown, retryAfter: number) => Error;
}

/**
 * jose's `createRemoteJWKSet`, with a cool-down after a failed download: for
 * `failureCooldownDuration` no other download is tried, and a request that would need one is
 * refused at once with the seconds left. A key set fetched earlier goes on serving its keys within
 * `cacheMaxAge`; none is served past it (a stale key set during an outage is not used).
 *
 * Downloads run one at a time: jose shares one pending download between concurrent requests, and
 * its failure reaches every waiter as the same error, recorded once.
 */
export function remoteKeySet(url: URL, options: RemoteKeySetOptions): ReloadableKeySource {
  const { failureCooldownDuration, maxBytes, ...joseSettings } = options.jwks;
  const { now, unavailable } = options;
  const download: FetchImplementation = options.fetch ?? ((href, init) => fetch(href, init));
  let failure: { error: unknown; at: number } | undefined;
  const msLeft = () => (failure === undefined ? 0 : failure.at + failureCooldownDuration - now());
  // Whole seconds, at least 1: a window of 200 ms still asks the client to wait a second.
  const secondsLeft = () => Math.max(1, Math.ceil(msLeft() / 1000));

  // Every download jose starts (a stale key set, an unknown kid) goes through here, and its body
  // is read within maxBytes (under jose's timeout signal, which aborts the read too).
  // Each download traced on `tracing:svc:auth:jwks:*`, its body read within it.
  const uri = url.href;
  const gated: FetchImplementation = (href, init) =>
    msLeft() > 0
      ? Promise.reject(new CoolingDown())
      : jwksFetches.traced({ uri }, () =>
          download(href, init).then((response) => boundedResponse(response, maxBytes)),
        );
  const remote = createRemoteJWKSet(url, { ...joseSettings, [customFetch]: gated });
  // jose replaces its key set object on each download it accepts: a new one is a refresh.
  let known: unknown = remote.jwks();
  const refreshed = (): void => {
    const jwks = remote.jwks();
    if (jwks === known) return;
    known = jwks;
    if (jwks !== undefined && authChannel.hasSubscribers)
      publishDecision(authChannel, { decision: "jwks-refreshed", uri, keys: jwks.keys.length });
  };

  // Set by invalidate() (the verifier's clearCache, after a key revocation): jose would go on
  // serving the key set it holds for up to cacheMaxAge, revoked key included. Until a download
  // succeeds no key is served: concurrent requests share that one download, and a failure leaves
  // the set stale, so the requests after it are refused (503) rather than served the old keys.
  let stale = false;
  let reloading: Promise<void> | undefined;

  const getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      if (stale && reloading === undefined) {
        reloading = remote.reload().then(
          () => {
            stale = false;
            reloading = undefined;
          },
          (err: unknown) => {
            reloading = undefined;
            throw err;
          },
        );
      }
      if (reloading !== undefined) await reloading;
      const key = await remote(header, token);
      refreshed();
      return key;
    } catch (err) {
      refreshed();
      // RFC 9110 §10.2.3: Retry-After "indicate[s] how long the user agent ought to wait before
      // making a follow-up request"; §15.6.4: a 503 server "MAY send a Retry-After header field".
      if (err instanceof CoolingDown && failure !== undefined)
        throw unavailable(failure.error, secondsLeft());
      if (!isKeySourceFailure(err)) throw err;
      // The waiters of one download share its error: the window starts once, at its end. jose
      // clears its pending download in a microtask before this runs, and no request (a macrotask)
      // can start another one in between.
      if (failure?.error !== err) {
        failure = { error: err, at: now() };
        if (authChannel.hasSubscribers)
          publishDecision(authChannel, { decision: "jwks-failed", uri, error: err });
      }
      throw unavailable(err, secondsLeft());
    }
  };
  return Object.assign(getKey, {
    invalidate() {
      stale = true;
    },
  });
}
