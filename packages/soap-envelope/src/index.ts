export type { SoapAddressing } from "./addressing/headers.js";
export {
  createSoapEndpoint,
  type SoapEndpoint,
  type SoapEndpointOptions,
  type SoapHttpInput,
  type SoapRoute,
  soapResponseValue,
} from "./binding/core.js";
export type { SoapDocument } from "./binding/documents.js";
export { type SoapFaultsOptions, soapFaults } from "./binding/fault-renderer.js";
export { type MediaType, parseMediaType } from "./binding/media-type.js";
export {
  createSoapService,
  httpErrorToFault,
  SOAP11_MEDIA_TYPE,
  SOAP12_MEDIA_TYPE,
  type SoapAuthContext,
  type SoapContext,
  type SoapHandler,
  type SoapHandlers,
  type SoapLogger,
  type SoapOperationTypes,
  type SoapRequest,
  type SoapResponse,
  SoapResultError,
  type SoapService,
  type SoapServiceOptions,
} from "./binding/service.js";
export {
  ACTOR_NEXT,
  checkEnvelope,
  type HeaderBlock,
  isTargeted,
  type ParsedEnvelope,
  type ParseEnvelopeOptions,
  parseEnvelope,
  ROLE_NEXT,
  ROLE_NONE,
  ROLE_ULTIMATE_RECEIVER,
  Soap11EnvelopeError,
  serializeEnvelope,
} from "./envelope/envelope.js";
export {
  type FaultCode,
  type FaultReasonText,
  fault11ToXml,
  faultToXml,
  isSoapFault,
  type QName,
  SOAP11_NS,
  SOAP12_NS,
  SoapFault,
  type SoapFaultInit,
  WSSE_NS,
} from "./envelope/fault.js";
export { type SoapDiagnostic, soapChannel } from "./processor/diagnostics.js";
export {
  type Contract,
  type ContractDefect,
  type ContractOperation,
  type DefectClass,
  type DefectLogger,
  type LoadContractOptions,
  loadContract,
  type SoapVersion,
} from "./wsdl/contract.js";
export { type GenerateTypesOptions, generateTypes } from "./wsdl/generate-types.js";
export { SoapAuthenticationError } from "./wsse/credentials.js";
export type {
  WsReplayOptions,
  WsSecurityOptions,
  WsSignatureOptions,
  WsTimestampOptions,
} from "./wsse/options.js";
export type { WsSecurityResult } from "./wsse/security.js";
export type { WsSignature } from "./wsse/signature.js";
export type { WsTimestamp } from "./wsse/timestamp.js";
export {
  type ParsedElement,
  parseXml,
  parseXmlString,
  type ResolvedXmlLimits,
  resolveLimits,
  type XmlElement,
  XmlError,
  type XmlLimits,
  type XmlSource,
} from "./xml/reader.js";
export {
  type BuiltinType,
  CompiledSchema,
  type CompileOptions,
  compareDecimal,
  compileSchemas,
  type LongRepresentation,
  SchemaCompileError,
  type SchemaSource,
  SchemaValidationError,
} from "./xsd/schema.js";
