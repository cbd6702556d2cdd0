export {
  type FieldError,
  HttpError,
  type HttpErrorOptions,
  isHttpError,
  reasonPhrase,
} from "@svc/kernel";
export { CUT_MARK, ERROR_RECORD_LIMITS, MAX_EXTENSION_DEPTH } from "./bounds.js";
export {
  type ErrorContext,
  type ErrorLog,
  type ErrorOutcome,
  errorValue,
  failureLog,
  refusalLog,
  renderError,
  writeErrorLogs,
} from "./core.js";
export type { ErrorDiagnostic } from "./diagnostics.js";
export {
  type DefaultErrorFormat,
  ERROR_CONTENT_TYPES,
  type ErrorFormat,
  errorFormat,
  errorRendering,
} from "./error-format.js";
export {
  DEFAULT_CAUSE_DEPTH,
  fallbackLogger,
  type Logger,
  type SerializedError,
  serializeError,
} from "./logger.js";
export { type MappedError, type MapperDecision, mappedError } from "./map-error.js";
export type { NextFunction } from "./next-function.js";
export { type ErrorsOpenApiOptions, errorsOpenApi } from "./openapi.js";
export {
  type ErrorConfig,
  type ErrorLogger,
  type ErrorMapper,
  type ErrorOptions,
  type ErrorValueConfig,
  errorConfig,
} from "./options.js";
export {
  absoluteFormOrigin,
  buildErrorRecord,
  buildProblemDetails,
  clientMessage,
  type ErrorRecord,
  type ProblemDetails,
  stripQuery,
} from "./record.js";
export type { ErrorRenderer, ErrorRendering } from "./renderer.js";
export { allowedList, methodNotAllowedError, notFoundError } from "./route-errors.js";
export { malformedBody, toHttpError } from "./to-http-error.js";
export { errorRecordToXml, escapeXml, problemDetailsToXml, WSSE_NS, WSU_NS, type XmlElement } from "./xml.js";
