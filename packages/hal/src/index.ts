export {
  type BaseUrlOptions,
  externalBaseUrl,
  externalFacts,
  externalOrigin,
  type HrefOptions,
  hrefFor,
  type OriginInput,
  parseForwarded,
  resolveOrigin,
  resolvePrefix,
} from "./base-url.js";
export { templateVariables } from "./crawl.js";
export { HAL_JSON, halJson } from "./hal-json.js";
export { createHostCheck, type HostCheck, type HostCheckOptions, hostGate } from "./host-check.js";
export {
  expandLink,
  expandTemplate,
  type HalLink,
  type TemplateValue,
  type TemplateVariables,
  toHalLink,
} from "./link.js";
export { halLinksSchema, halOpenApi, halPageSchema, halResourceSchema } from "./openapi.js";
export {
  isPage,
  type PageLinks,
  type PageMetadata,
  type PageModel,
  type PageModelInput,
  type PageRequest,
  type PageRequestOptions,
  pageItems,
  pageModel,
  parsePageRequest,
  type QueryInput,
} from "./page.js";
export {
  type FollowOptions,
  HalFollowError,
  type HalFollowErrorCode,
  type HalReader,
  type ReadHalOptions,
  readHal,
} from "./read.js";
export { RELATIONS, Rel, type Relation } from "./relations.js";
export {
  type HalDocument,
  HalResource,
  type HalResourceOptions,
  hal,
  type RelationOptions,
} from "./resource.js";
export { compileTrust, type TrustProxy, type TrustProxyOption } from "./trust.js";
