// One media-range selection for every @svc package: @svc/errors picks error renderings with it too.
export { type MediaTypeMatch, matchMediaType, selectMediaType } from "@svc/kernel";
export {
  type BodyContent,
  type BodyReader,
  bodyReader,
  closesConnection,
  type ParseBodyOptions,
  type ParsedBodyRequest,
  parseXmlBody,
  /** @deprecated Renamed `parseXmlBody` (the same function): `parseXml` is `@svc/soap-envelope`'s infoset parser. */
  parseXmlBody as parseXml,
  readBody,
  type XmlValue,
} from "./body.js";
export {
  type CompressionOptions,
  /** @deprecated The same type: `CompressionOptions`. */
  type CompressionOptions as CompressionStepOptions,
  compression,
} from "./coder.js";
export type { RequestCoding } from "./content-coding.js";
export { type CrossOriginOptions, crossOriginGate, type OriginMatcher } from "./cors.js";
export { type NegotiateDiagnostic, negotiateChannel } from "./diagnostics.js";
export { selectEncoding } from "./encoding.js";
export type { FormBodyOptions, FormValue } from "./form-body.js";
export { selectLanguage } from "./language.js";
export { MEDIA_TYPE } from "./media-type-hint.js";
export { type NegotiateOpenApiOptions, negotiateOpenApi } from "./openapi.js";
export {
  type CsvRepresentationOptions,
  csv,
  csvRepresentation,
  defaultRepresentations,
  html,
  isTextual,
  json,
  type Representation,
  type RepresentationBody,
  type RepresentContext,
  text,
  type XmlRepresentationOptions,
  xml,
  xmlRepresentation,
} from "./representation.js";
export { type RepresentationsOptions, representations } from "./representer.js";
export { fromXmlRepresentation, type XmlBodySchema } from "./xml-representation.js";
