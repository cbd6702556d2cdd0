export { CUT_MARK, ERROR_RECORD_LIMITS, MAX_EXTENSION_DEPTH } from "./bounds.js";
export { type ClientErrorListener, type ClientErrorOptions, clientErrorHandler } from "./client-error.js";
export { ERROR_CONTENT_TYPES, type ErrorFormat, errorFormat, errorRendering } from "./error-format.js";
export {
  allowedMethods,
  type ErrorHandlerOptions,
  type ErrorLogger,
  type ErrorRequest,
  errorHandler,
  methodNotAllowed,
  type NextFunction,
  notFound,
  renderError,
} from "./error-handler.js";
export { type ExpressPrototypes, type ExpressServerClasses, expressServerOptions } from "./express-server.js";
export { type TrustHop, trustedHops, trustedListValue } from "./forwarded.js";
export {
  fieldLines,
  isToken,
  isToken68,
  MAX_FIELD_LENGTH,
  MAX_LIST_MEMBERS,
  type MediaRange,
  type MediaType,
  type MediaTypeMatch,
  matchMediaType,
  type Parameter,
  parseMediaRanges,
  parseMediaType,
  parseParameters,
  parseQList,
  parseQValue,
  type QItem,
  quoteString,
  repeatsField,
  selectMediaType,
  splitList,
  trimOws,
} from "./grammar.js";
export { type FieldError, HttpError, type HttpErrorOptions, isHttpError } from "./http-error.js";
export { stringifyJson } from "./json.js";
export {
  DEFAULT_CAUSE_DEPTH,
  fallbackLogger,
  type Logger,
  type SerializedError,
  serializeError,
} from "./logger.js";
export { type Negotiation, negotiationOf } from "./negotiation.js";
export {
  checkBooleanOption,
  checkOptionNames,
  describeValue,
  type OptionError,
  optionError,
  optionErrorCode,
  refusedOption,
} from "./option-error.js";
export {
  absoluteFormOrigin,
  buildErrorRecord,
  buildProblemDetails,
  clientMessage,
  type ErrorRecord,
  type ProblemDetails,
  stripQuery,
} from "./record.js";
export { isErrorStatus, reasonPhrase } from "./status.js";
export { isTimerDelay, MAX_TIMER_MS } from "./timer.js";
export { toHttpError } from "./to-http-error.js";
export { appendVary } from "./vary.js";
export { errorRecordToXml, escapeXml, problemDetailsToXml, WSSE_NS, WSU_NS, type XmlElement } from "./xml.js";
export { xmlDeclaredEncoding } from "./xml-declaration.js";
