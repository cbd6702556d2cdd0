/**
 * `@svc/hal/express`: the package on Express 4 and 5: the host check as middleware
 * (`allowedHosts`) and the base URL and links from `req` as it is, honouring the app's
 * `trust proxy` setting.
 *
 * @packageDocumentation
 */
import { type BaseUrlOptions, type BaseUrlRequest, externalBaseUrl } from "@svc/hal";

export {
  allowedHosts,
  type BaseUrlOptions,
  type BaseUrlRequest,
  type HostCheckOptions,
  type HrefOptions,
  hrefFor,
  type TrustProxy,
  type TrustProxyOption,
} from "@svc/hal";

/**
 * The external base URL of the service for `req` (`externalBaseUrl`): the origin the client used
 * behind the proxies trusted (the app's `trust proxy` setting unless `trustProxy` is given), and
 * a trusted `X-Forwarded-Prefix`.
 *
 * @example pageModel({ ..., url: req.originalUrl, origin: baseUrl(req) })
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function baseUrl(req: BaseUrlRequest, options: BaseUrlOptions = {}): string {
  return externalBaseUrl(req, options);
}
