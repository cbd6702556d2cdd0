import { compileTrust, type ForwardedHeaders, type TrustHop, type TrustOption } from "@svc/kernel";
import { checkForwardedHeaders } from "@svc/kernel/internal";
import type { SoapEndpointOptions } from "@svc/soap-envelope";

/** Options every adapter but Express's takes besides the endpoint's. */
export interface AdapterOptions {
  /**
   * Which peers may set `Forwarded` / `X-Forwarded-Proto` / `X-Forwarded-Host`, read for the
   * address written into the WSDL: the forms of Express's `trust proxy` setting (`true`, a hop
   * count, `"loopback, 10.0.0.0/8"`, a function).
   * @default false (the address is the request's own `Host` and connection)
   */
  trustProxy?: TrustOption;
  /**
   * The one family of forwarded fields the WSDL's address is read from behind a trusted proxy,
   * the one it sets: `"x-forwarded"` (`X-Forwarded-Proto` / `-Host`) or `"forwarded"` (RFC 7239
   * `Forwarded`). Never a mix: a proxy passes the other family through from the client.
   * @default "x-forwarded"
   */
  forwardedHeaders?: ForwardedHeaders;
}

/**
 * The endpoint's options and the adapter's (`trustProxy`, `forwardedHeaders` and `extra`), apart;
 * `trustProxy` compiled once, `forwardedHeaders` checked once. What is neither is left to the
 * endpoint, which refuses an unknown name.
 */
export function splitOptions(
  options: object,
  extra: readonly string[],
): { soap: SoapEndpointOptions; own: Record<string, unknown>; trust: TrustHop; family: ForwardedHeaders } {
  if (typeof options !== "object" || options === null) {
    return { soap: options as SoapEndpointOptions, own: {}, trust: NO_TRUST, family: "x-forwarded" };
  }
  const soap: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === "trustProxy" || key === "forwardedHeaders" || extra.includes(key)) own[key] = value;
    else soap[key] = value;
  }
  const trust =
    own.trustProxy === undefined ? NO_TRUST : compileTrust(own.trustProxy as TrustOption, "soap-envelope");
  const family = checkForwardedHeaders(own.forwardedHeaders, "soap-envelope");
  return { soap: soap as unknown as SoapEndpointOptions, own, trust, family };
}

const NO_TRUST: TrustHop = () => false;
