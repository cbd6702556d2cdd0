import { compileTrust, type TrustHop, type TrustOption } from "@svc/kernel";
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
}

/**
 * The endpoint's options and the adapter's (`trustProxy` and `extra`), apart; `trustProxy`
 * compiled once. What is neither is left to the endpoint, which refuses an unknown name.
 */
export function splitOptions(
  options: object,
  extra: readonly string[],
): { soap: SoapEndpointOptions; own: Record<string, unknown>; trust: TrustHop } {
  if (typeof options !== "object" || options === null) {
    return { soap: options as SoapEndpointOptions, own: {}, trust: NO_TRUST };
  }
  const soap: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === "trustProxy" || extra.includes(key)) own[key] = value;
    else soap[key] = value;
  }
  const trust =
    own.trustProxy === undefined ? NO_TRUST : compileTrust(own.trustProxy as TrustOption, "soap-envelope");
  return { soap: soap as unknown as SoapEndpointOptions, own, trust };
}

const NO_TRUST: TrustHop = () => false;
