/**
 * `@svc/negotiate/express`: the package on Express 4 and 5. The same middleware as the main entry
 * (`crossOrigin`, `parseBody`), and the pipeline steps (`representations`, `compression`) that the
 * kernel's Express adapter (`expressAdapter` of `@svc/kernel/express`) runs.
 *
 * @packageDocumentation
 */
export {
  type CrossOriginOptions,
  crossOrigin,
  type ParseBodyOptions,
  type ParsedBodyRequest,
  parseBody,
  type XmlBodySchema,
} from "@svc/negotiate";
