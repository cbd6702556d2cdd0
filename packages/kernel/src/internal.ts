/**
 * `@svc/kernel/internal`: what the @svc packages share so that each has one implementation of it,
 * not a second copy that could drift (option refusals and their codes, timer bounds, the members
 * an error record reserves, the bounded memo of the per-request path, how the stores reach Redis
 * and Durable Objects). It is an entry of its own so that the main entry, `@svc/kernel`, holds
 * only what applications use.
 *
 * For the @svc packages only. It has an API report (`api/internal.api.md`) and changes to it
 * take the bump they need, because a released @svc package imports it within its peer range of
 * `@svc/kernel`; but it is not documented for applications and is no promise to them: a name may
 * move or go in the next minor (the next major from 1.0.0).
 *
 * @packageDocumentation
 */
// Express's asyncRoute, for `@svc/errors` to re-export from its main entry without the Node.js
// writer of the Express entry.

// Held in the main entry, as the exchanges are: a runtime without node:diagnostics_channel has
// one set of channels in a process, and a published decision is kept in the request's exchange.
export {
  type DecisionChannel,
  decisionChannel,
  type LiteralDecisions,
  publishDecision,
  tracedCall,
} from "@svc/kernel";
export { asyncRoute, type NextFunction } from "./async-route.js";
export { BoundedMemo, BoundedPairMemo, type MemoBound } from "./bounded-memo.js";
export { buildResponse, isCodedBody } from "./coded-response.js";
export { concatBytes } from "./concat-bytes.js";
export { type DigestAlgorithm, type DigestEncoding, digest, portableDigest } from "./digest.js";
export {
  callDurableObject,
  type DurableObjectBatchStateLike,
  type DurableObjectBatchStorageLike,
  type DurableObjectCallOptions,
  type DurableObjectIdLike,
  type DurableObjectNamespaceLike,
  DurableObjectShell,
  type DurableObjectShellOptions,
  type DurableObjectStateLike,
  type DurableObjectStorageLike,
  type DurableObjectStubLike,
  isDurableObjectNamespace,
} from "./durable-object.js";
export {
  EXTENSION_NAME,
  isExtensionName,
  MAX_EXTENSION_MEMBERS,
  PROBLEM_MEMBERS,
  RECORD_MEMBERS,
} from "./error-members.js";
export { checkForwardedHeaders } from "./forwarded.js";
// The types the helpers take and return, exported by the main entry as well.
export { checkedFieldErrors, type FieldError, hasAllow, isProblemCode } from "./http-error.js";
export { isIP, isIPv4, isIPv6 } from "./ip.js";
export { isOpenApiObject, openApiOperations } from "./openapi.js";
export {
  checkBooleanOption,
  checkOptionNames,
  checkOptionType,
  describeValue,
  type OptionError,
  optionError,
  optionErrorCode,
  refusedOption,
  requireOptionType,
} from "./option-error.js";
export {
  evalScript,
  isNoScript,
  type RedisClientShape,
  type RedisScript,
  type RedisSend,
  redisClientShape,
  redisScript,
  redisSender,
} from "./redis-client.js";
export { followRedirection, type RedirectedClient, type RedirectingCluster } from "./redis-redirection.js";
export { pluginOptions, REGISTER_OPTIONS } from "./register-options.js";
export { writeRequestProperty } from "./request-property.js";
export { type RequestSlot, requestSlot } from "./request-slot.js";
export { cutCharacters, shown } from "./shown.js";
export { StoreOptions } from "./store.js";
export { isTimerDelay, MAX_TIMER_MS } from "./timer.js";
export { resolveUnreadBody, unreadBodyAction } from "./unread-body.js";
export { utf8Bytes } from "./utf8.js";
export { type KeyedValues, valueFor } from "./value-for.js";
export { emitWarning } from "./warning.js";
export { withinTime } from "./within-time.js";
export {
  UNBOUNDED_XML_RULES,
  type XmlAttributeNS,
  type XmlEvents,
  XmlReadError,
  XmlReader,
  type XmlReaderOptions,
  type XmlReadProblem,
  type XmlReadRules,
  type XmlTag,
  type XmlTagNS,
  type XmlTagPlain,
} from "./xml-reader.js";
