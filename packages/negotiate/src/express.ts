/**
 * `@svc/negotiate/express`: the package on Express 4 and 5. The same middleware as the main entry
 * (`crossOrigin`, `parseBody`), and the pipeline steps (`representations`, `compression`) that the
 * kernel's Express adapter (`expressAdapter` of `@svc/kernel/express`) runs.
 *
 * @packageDocumentation
 */
export {
  type CompressionOptions,
  type CrossOriginOptions,
  compression,
  crossOrigin,
  crossOriginGate,
  csv,
  html,
  json,
  type ParseBodyOptions,
  type ParsedBodyRequest,
  parseBody,
  type Representation,
  type RepresentationBody,
  type RepresentationsOptions,
  type RepresentContext,
  representations,
  text,
  type XmlBodySchema,
  xml,
} from "@svc/negotiate";
