import { HttpError, isHttpError } from "@svc/errors";
import {
  type Authority,
  type ForwardedHeaders,
  type RequestView,
  repeatsField,
  requestFacts,
} from "@svc/kernel";
import { checkForwardedHeaders, checkOptionNames } from "@svc/kernel/internal";
import { compileHostList } from "./host.js";
import { compileTrust, type TrustProxy, type TrustProxyOption } from "./trust.js";

/** Options of {@link createHostCheck} and `allowedHosts`. */
export interface HostCheckOptions {
  /**
   * Which peers may name the host in `X-Forwarded-Host` / `Forwarded` (see `compileTrust`):
   * behind them, the forwarded host is the one checked, as it is the one links are built from.
   * @default the framework's trust the request's exchange records: under Express
   *   (`@svc/hal/express`), the app's `trust proxy` setting; under Fastify, its `trustProxy` server
   *   option; else false
   */
  trustProxy?: TrustProxyOption;
  /**
   * The one family of forwarded fields the host is read from behind a trusted proxy, the one it
   * sets: `"x-forwarded"` (`X-Forwarded-Host`) or `"forwarded"` (RFC 7239 `Forwarded`). Never a
   * mix: a proxy passes the other family through from the client.
   * @default "x-forwarded" (as Express and Fastify read)
   */
  forwardedHeaders?: ForwardedHeaders;
}

/**
 * Checks one request's host: undefined when the service answers for it, else the error to answer
 * with (a 400 `invalid_host` `HttpError` or a 421 `misdirected_request` one).
 */
export type HostCheck = (req: RequestView) => HttpError | undefined;

/**
 * Compiles the hosts a service answers for into a framework-free check of a request's view (a
 * `node:http` request as it is, or `fetchView(request)` of `@svc/kernel/fetch`).
 * Links and `Location` are built from the request's host (`Host`, or the forwarded host of a
 * trusted proxy), so without the check a request with `Host: evil.example` gets links, and
 * cacheable pages, pointing there. A host not in `hosts` gets 421 Misdirected Request (RFC 9110
 * §7.4: a server unwilling to answer authoritatively for the target URI's authority; §15.5.20),
 * as does a request with no host at all. A host that is not a valid authority is a 400
 * `invalid_host` on every request, with `hosts` `"*"` too, not only where a link happens to be
 * built, and so is a request with more than one `Host` line (RFC 9112 §3.2). `hosts`: exact
 * names, `.example.com` for a domain and its subdomains, IPv4 addresses and `[IPv6]` literals,
 * compared case-insensitively (RFC 9110 §4.2.3) and without a trailing dot.
 * Options are checked here: a bad one is a `TypeError` with `code` `ERR_SVC_HAL_ALLOWED_HOSTS`,
 * `ERR_SVC_HAL_TRUST_PROXY` or `ERR_SVC_HAL_FORWARDED_HEADERS`.
 *
 * @example
 * const checkHost = createHostCheck(["api.example.com", ".svc.example"], { trustProxy: "loopback" });
 * const error = checkHost(req); // undefined, or the HttpError to answer with
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export function createHostCheck(hosts: readonly string[] | "*", options: HostCheckOptions = {}): HostCheck {
  checkOptionNames("hal", options, ["trustProxy", "forwardedHeaders"], "@svc/hal");
  const list = compileHostList(hosts);
  const family = checkForwardedHeaders(options.forwardedHeaders, "hal");
  // true and false stay booleans: no address is read for them.
  const option = options.trustProxy;
  const trust: boolean | TrustProxy | undefined =
    option === undefined || typeof option === "boolean" ? option : compileTrust(option);
  // parseHost gives the same frozen authority for a repeated host, so its verdict is kept too.
  let lastAuthority: Authority | undefined;
  let lastAllowed = false;
  return function checkHost(req) {
    // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
    // request message that [...] contains more than one Host header field line". Node keeps the
    // first line and drops the rest, so the check would read one host while a proxy read another.
    if (repeatsField(req.rawHeaders, "host")) {
      return HttpError.badRequest("The request has more than one Host header field", {
        code: "invalid_host",
      });
    }
    let authority: Authority | undefined;
    try {
      authority = requestFacts(req, trust, family).authority;
    } catch (err) {
      if (isHttpError(err)) return err;
      throw err;
    }
    if (list === undefined) return undefined;
    if (authority !== undefined && authority !== lastAuthority) {
      lastAllowed = list.matches(authority.host);
      lastAuthority = authority;
    }
    if (authority !== undefined && lastAllowed) return undefined;
    return new HttpError(421, "This service does not answer for the host the request names", {
      code: "misdirected_request",
    });
  };
}

/**
 * {@link createHostCheck} as a `Gate` of `@svc/kernel`: a request for a host the service answers
 * for goes on (`undefined`); any other is refused by throwing the check's `HttpError` (421
 * `misdirected_request`, or 400 `invalid_host`), for the framework's error handling. The
 * framework adapters apply it: `allowedHosts` of `@svc/hal/express`, `/node`, `/fastify` and
 * `/fetch`.
 *
 * @example
 * const gate = hostGate(["api.example.com"], { trustProxy: "loopback" });
 * gate({ headers: { host: "evil.example" } }); // throws the 421
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export function hostGate(
  hosts: readonly string[] | "*",
  options: HostCheckOptions = {},
): (view: RequestView, native?: unknown) => undefined {
  const checkHost = createHostCheck(hosts, options);
  return function checkHostGate(view) {
    const error = checkHost(view);
    if (error !== undefined) throw error;
    return undefined;
  };
}
