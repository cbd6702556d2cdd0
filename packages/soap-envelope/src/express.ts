/**
 * `@svc/soap-envelope/express`: the SOAP endpoint as Express 4 and 5 middleware, as the main
 * entry exports it (`soapEndpoint`, `soapErrorHandler`).
 *
 * @packageDocumentation
 */
export {
  type SoapEndpointHandler,
  type SoapEndpointOptions,
  type SoapHttpRequest,
  soapEndpoint,
  soapErrorHandler,
} from "@svc/soap-envelope";
