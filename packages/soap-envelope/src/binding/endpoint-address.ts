import { absoluteFormOrigin, HttpError } from "@svc/errors";
import type { RequestFacts } from "@svc/kernel";
import { isIPv6 } from "@svc/kernel/internal";

/** What the externally visible URL of the endpoint is computed from: header strings only. */
export interface AddressInput {
  /** Every `Host` field line the request carried (none for an HTTP/1.0 request without one). */
  host: readonly string[];
  /** The request's HTTP version (`"1.1"`, `"1.0"`): an HTTP/1.1 request must name a host. */
  httpVersion: string | undefined;
  /**
   * The request's facts (`requestFacts` of @svc/kernel): behind a trusted peer, the scheme and
   * host it forwarded (from the one family read: `X-Forwarded-Proto` / `X-Forwarded-Host`, or
   * `Forwarded`) and the fields they were read from.
   */
  facts: Pick<RequestFacts, "trusted" | "forwarded" | "vary">;
  /** Whether the connection is TLS (`https`). */
  encrypted: boolean;
  /** The endpoint's path as the client requested it (before mount-path stripping), no query. */
  path: string;
  /**
   * The request-target as received: in absolute-form (`http://shop.example/ws/customer`), its
   * authority names the host instead of `Host` (RFC 9112 §3.2.2).
   * @default undefined (`Host` names the host)
   */
  target?: string | undefined;
}

/** The endpoint's URL and the request fields, besides `Host`, it was computed from. */
export interface EndpointAddress {
  url: string;
  /**
   * RFC 9110 §12.5.5: the fields Vary must name, "what parts of a request message, aside from the
   * method and target URI, might have influenced the content of this response". `Host` is part of
   * the target URI (§7.1) and never listed; behind a trusted peer, the fields of the one family
   * read, present or not: `X-Forwarded-Proto` / `X-Forwarded-Host` (`X-Forwarded-For` when it chose
   * which member of a list was read), or `Forwarded`. Empty when the peer is not trusted.
   */
  vary: readonly string[];
}

const NO_VARY: readonly string[] = Object.freeze([]);

/**
 * The URL clients use to reach the endpoint, written into the WSDL's `soap12:address` and the
 * `schemaLocation`s. Behind a trusted peer, the scheme and host the trusted chain forwarded, as
 * `requestFacts` of @svc/kernel reads them for every package, from the one family the proxy sets:
 * the `X-Forwarded-Proto` / `X-Forwarded-Host` value the chain appended, or RFC 7239 `Forwarded`
 * (the element the chain added); the first value of a list may be one the client sent itself
 * (RFC 7239 §8.1). Only `http` and `https`
 * name a scheme (RFC 9110 §4.2); else the authority of an absolute-form target, which RFC 9112
 * §3.2.2 says to use instead of `Host` ("the origin server MUST ignore the received Host header
 * field (if any) and instead use the host information of the request-target"), else `Host` (RFC
 * 9110 §7.2), with the connection's own scheme.
 *
 * The authority is checked before it is written: RFC 9112 §3.2, "A server MUST respond with a 400
 * (Bad Request) status code to any HTTP/1.1 request message that ... contains more than one Host
 * header field line or a Host header field with an invalid field value". A forwarded host that is
 * not an authority is refused the same way, never written into the document.
 *
 * An empty port, or the scheme's default (`:80` on http, `:443` on https), is left out of the URL
 * (RFC 3986 §3.2.3): `Host: shop.example:` → `http://shop.example/...`.
 *
 * Behind a trusted peer the result depends on the forwarded fields as well, which `vary` names.
 *
 * @throws HttpError 400 for more than one `Host` line, a host that is not an RFC 3986 authority or
 * an HTTP/1.1 request without one ({@link hostRefusal}), an absolute-form target whose authority
 * is empty or not one ({@link targetAuthority})
 */
export function endpointAddress(input: AddressInput): EndpointAddress {
  const refusal = hostRefusal(input.host, input.httpVersion);
  if (refusal !== undefined) throw refusal;
  let protocol = input.encrypted ? "https" : "http";
  let host = targetAuthority(input.target) ?? input.host[0] ?? "";
  let vary = NO_VARY;
  if (input.facts.trusted) {
    const { proto, host: forwarded } = input.facts.forwarded;
    if (proto === "http" || proto === "https") protocol = proto;
    if (forwarded !== undefined) {
      if (!isAuthority(forwarded)) throw HttpError.badRequest("The forwarded host is not a valid host");
      host = forwarded;
    }
    vary = input.facts.vary;
  }
  // Only an HTTP/1.0 request without a host gets here with an empty one (hostRefusal).
  if (host === "") host = "localhost";
  host = withoutDefaultPort(host, protocol);
  let path = input.path;
  if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return { url: `${protocol}://${host}${path}`, vary };
}

/**
 * The 400 a request's `Host` field lines earn, or undefined when they are fine. RFC 9112 §3.2: "A
 * server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request message that
 * lacks a Host header field and to any request message that contains more than one Host header
 * field line or a Host header field with an invalid field value." The value must be an RFC 9110
 * §7.2 `uri-host [ ":" port ]` ({@link isAuthority}). An empty one is the grammar's, but it leaves
 * the target URI's authority empty (RFC 9112 §3.3), which an `http` or `https` URI may not be (RFC
 * 9110 §4.2.1: a recipient "MUST reject it as invalid"): refused on HTTP/1.1, whose clients must
 * name the host; an HTTP/1.0 request, which need not carry `Host`, may leave it out or empty.
 *
 * Checked on every request the package answers, the SOAP POSTs as well as `?wsdl` / `?xsd=`.
 */
export function hostRefusal(
  lines: readonly string[],
  httpVersion: string | undefined,
): HttpError | undefined {
  if (lines.length > 1)
    return HttpError.badRequest("The request carries more than one Host header field line");
  const host = lines[0];
  if (host === undefined || host === "") {
    return httpVersion === "1.1"
      ? HttpError.badRequest("The HTTP/1.1 request's Host header is empty")
      : undefined;
  }
  return isAuthority(host)
    ? undefined
    : HttpError.badRequest("The request's Host header is not a valid host");
}

/**
 * The authority of an absolute-form request-target (`http://shop.example:8080/ws?wsdl` →
 * `shop.example:8080`), undefined for any other form. The `Host` lines are still checked (RFC 9112
 * §3.2 asks it of every HTTP/1.1 request), but this is the host the client asked for.
 *
 * @throws HttpError 400 for an empty authority (RFC 9110 §4.2.1: a recipient of an `http` URI
 * with an empty host "MUST reject it as invalid") or one that is not an RFC 3986 authority, such
 * as one with userinfo (RFC 9110 §4.2.4: "treat its presence as an error").
 */
function targetAuthority(target: string | undefined): string | undefined {
  if (target === undefined) return undefined;
  const origin = absoluteFormOrigin(target);
  if (origin === "") return undefined;
  const authority = origin.slice(origin.indexOf("://") + 3);
  if (authority === "" || !isAuthority(authority)) {
    throw HttpError.badRequest("The request-target's authority is not a valid host");
  }
  return authority;
}

/**
 * RFC 3986 §3.2.3: "URI producers and normalizers should omit the port component and its ':'
 * delimiter if port is empty or if its value would be the same as that of the scheme's default"
 * (RFC 9110 §4.2.1: 80 for http; §4.2.2: 443 for https). `host` is an authority
 * ({@link isAuthority}): a `:` after the last `]` (an IP-literal holds colons of its own) starts
 * the port, digits only.
 */
function withoutDefaultPort(host: string, protocol: string): string {
  const colon = host.lastIndexOf(":");
  if (colon === -1 || colon < host.lastIndexOf("]")) return host;
  const port = host.slice(colon + 1);
  return port === "" || Number(port) === (protocol === "https" ? 443 : 80) ? host.slice(0, colon) : host;
}

// RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ), which IPv4address is a
// subset of; §3.2.3: port = *DIGIT. Linear: one character class, each step consumes input.
const REG_NAME_PORT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*(?::[0-9]*)?$/;
// RFC 3986 §3.2.2: IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
const IP_FUTURE = /^v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/;

/**
 * RFC 9110 §7.2, `Host = uri-host [ ":" port ]` with RFC 3986 §3.2.2 `host`: an IP-literal
 * (`[` IPv6address or IPvFuture `]`; an RFC 6874 zone identifier is not RFC 3986 syntax) or a
 * reg-name, then §3.2.3 `port`. Nothing else may stand in a URI's authority: a space, `"`, `<`
 * would break the XML or the URI, `@`, `/`, `?`, `#` would name another authority or a path.
 */
function isAuthority(value: string): boolean {
  if (!value.startsWith("[")) return REG_NAME_PORT.test(value);
  const close = value.indexOf("]");
  if (close === -1 || !/^(?::[0-9]*)?$/.test(value.slice(close + 1))) return false;
  const literal = value.slice(1, close);
  return (/^[0-9A-Fa-f:.]+$/.test(literal) && isIPv6(literal)) || IP_FUTURE.test(literal);
}
