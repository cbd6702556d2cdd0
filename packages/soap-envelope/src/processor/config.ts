import type { RequestRule, UnreadBodyBounds } from "@svc/kernel";
import { optionError as codedOptionError, resolveUnreadBody } from "@svc/kernel/internal";
import { ADDRESSING_HEADERS, WSA_NS } from "../addressing/names.js";
import { AddressingSupport } from "../addressing/process.js";
import { envelopeCheckpoint, ROLE_NONE } from "../envelope/envelope.js";
import { upgradeHeader, WSSE_NS } from "../envelope/fault.js";
import type { Understood } from "../envelope/processing-model.js";
import { resolveMtom } from "../mtom/options.js";
import type { ResolvedMtom } from "../mtom/xop.js";
import {
  checkFunction,
  checkLogger,
  checkLongAs,
  checkNameList,
  checkObject,
  checkSchemaLocations,
  checkStrict,
  optionError,
} from "../options.js";
import { type Contract, type ContractOperation, loadContract, type SoapVersion } from "../wsdl/contract.js";
import { memoryDocuments } from "../wsdl/memory-documents.js";
import { resolveWsSecurity } from "../wsse/options.js";
import { type WsSecurityProcessor, wsSecurityProcessor } from "../wsse/security.js";
import { interned } from "../xml/interned.js";
import {
  clark,
  type ResolvedXmlLimits,
  resolveLimits,
  type XmlCheckpoint,
  type XmlElement,
  XmlTemplates,
} from "../xml/reader.js";
import type { SoapHandler, SoapLogger, SoapServiceOptions } from "./types.js";

/** SOAP 1.2 Part 2 §7.1.4: the media type of SOAP 1.2 messages over HTTP (RFC 3902). */
export const SOAP12_MEDIA_TYPE = "application/soap+xml";

export const RESPONSE_CONTENT_TYPE = "application/soap+xml; charset=utf-8";

/** SOAP 1.1 §6.1.1: "HTTP applications MUST use the media type "text/xml"". */
export const SOAP11_MEDIA_TYPE = "text/xml";

export const RESPONSE11_CONTENT_TYPE = "text/xml; charset=utf-8";

/** An operation and the namespace and local name of its input element (`op.input`, split). */
export interface Route {
  op: ContractOperation;
  namespace: string;
  localName: string;
  /**
   * The operations that take this Body element when there are several: the action tells them
   * apart (checked at load), a message without one of theirs is refused.
   */
  shared?: readonly ContractOperation[];
}

/** One binding's routes: operations by `action` / `SOAPAction` and by the qualified name of their input element. */
export interface Routes {
  /** An action several operations share is left out (Part 2 §7.1.4, WS-I BP 1.1 R2710). */
  byAction: ReadonlyMap<string, Route>;
  byElement: ReadonlyMap<string, Route>;
  /** Each operation's own route, by name: where its `wsa:Action` routes a message. */
  byName: ReadonlyMap<string, Route>;
}

/** The options of {@link createSoapService}, checked and resolved once. */
export interface ServiceConfig {
  contract: Contract;
  handlers: Readonly<Record<string, SoapHandler>>;
  authenticate: SoapServiceOptions["authenticate"];
  authorize: SoapServiceOptions["authorize"];
  /** The `wsSecurity` option, resolved, with its replay cache. */
  wsSecurity: WsSecurityProcessor | undefined;
  /** The `logger` option; per message, the request's logger or the fallback stands in. */
  logger: SoapLogger | undefined;
  limits: ResolvedXmlLimits;
  /** The envelope's checkpoint: header blocks bounded; with `authenticate`, a stop before the Body's content. */
  checkpoint: XmlCheckpoint;
  /** The `bodyTimeoutMs` option, resolved. */
  bodyTimeoutMs: number;
  /** The `unreadBody` option, resolved. */
  unreadBody: UnreadBodyBounds;
  roles: ReadonlySet<string>;
  /** Whether a header block is understood (Part 1 §2.4). */
  understood: Understood;
  /** The SOAP 1.2 binding's routes; undefined when the contract has none. */
  soap12: Routes | undefined;
  /** The SOAP 1.1 binding's routes; undefined when the contract has none. */
  soap11: Routes | undefined;
  /** The contract's versions, 1.2 first. */
  versions: readonly SoapVersion[];
  /** The env:Upgrade block of a VersionMismatch fault (Part 1 §5.4.7). */
  upgrade: string;
  /** `Accept-Post` of a 415: the media types of the versions served. */
  acceptPost: string;
  /**
   * What the HTTP binding takes of a request before reading it, as the kernel's `refuseRequest`
   * decides it for any route: POST (SOAP 1.2 Part 2 §7.4), with uncoded content.
   */
  posted: RequestRule;
  /** {@link posted}, in one of the media types of the versions served ({@link acceptPost}). */
  postedAs: RequestRule;
  /** The `mtom` option, resolved; undefined for `mtom: false` (multipart/related refused with 415). */
  mtom: ResolvedMtom | undefined;
  /** The limits a reconstructed XOP message is parsed within: its attachments' base64 on top of `limits.maxBytes`. */
  xopLimits: ResolvedXmlLimits;
  /** WS-Addressing 1.0; undefined for `addressing: false` (its headers not understood). */
  addressing: AddressingSupport | undefined;
}

/** {@link ServiceConfig.posted}. */
const POSTED: RequestRule = Object.freeze({
  methods: Object.freeze(["POST"]),
  contentCodings: Object.freeze([]),
});

const SERVICE_OPTIONS = [
  "wsdl",
  "handlers",
  "authenticate",
  "authorize",
  "understoodHeaders",
  "authenticateHeaders",
  "roles",
  "limits",
  "bodyTimeoutMs",
  "unreadBody",
  "logger",
  "validateResponses",
  "contract",
  "wsSecurity",
  "mtom",
  "addressing",
] as const;

export function resolveServiceConfig(options: SoapServiceOptions): ServiceConfig {
  if (typeof options !== "object" || options === null) {
    throw optionError("options", options, "an object { wsdl, handlers, ... }");
  }
  checkObject(options, "options", SERVICE_OPTIONS);
  if (typeof options.wsdl !== "string" || options.wsdl.trim() === "") {
    throw optionError("wsdl", options.wsdl, "the path of a WSDL 1.1 file or its text");
  }
  const handlers: unknown = options.handlers;
  if (typeof handlers !== "object" || handlers === null || Array.isArray(handlers)) {
    throw optionError("handlers", handlers, "an object with one handler function per operation");
  }
  checkFunction(options.authenticate, "authenticate", "a function (headerBlocks, context) => principal");
  checkFunction(options.authorize, "authorize", "a function (context) => boolean | Promise<boolean>");
  const understoodHeaders = checkNameList(options.understoodHeaders, "understoodHeaders") ?? [];
  const authenticateHeaders = checkNameList(options.authenticateHeaders, "authenticateHeaders");
  if (authenticateHeaders !== undefined && options.authenticate === undefined) {
    // Without the hook nothing consumes these blocks: counting them as understood would be a lie.
    throw optionError("authenticateHeaders", authenticateHeaders, "given only with authenticate");
  }
  const roles = checkRoles(options.roles);
  checkObject(options.limits, "limits", [
    "maxBytes",
    "maxDepth",
    "maxAttributes",
    "maxElements",
    "maxNamespaces",
    "maxHeaderBlocks",
    "maxExpandedBytes",
  ]);
  const limits = resolveLimits(options.limits);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  // Node's timers take at most 2^31 - 1 ms (a larger delay becomes 1 ms); 0 or Infinity would
  // mean no limit, which is what this option exists to prevent.
  if (!Number.isSafeInteger(bodyTimeoutMs) || bodyTimeoutMs < 1 || bodyTimeoutMs > 2_147_483_647) {
    throw optionError(
      "bodyTimeoutMs",
      options.bodyTimeoutMs,
      "a positive integer of milliseconds (at most 2147483647)",
    );
  }
  const unreadBody = resolveUnreadBody("soap-envelope", options.unreadBody, "@svc/soap-envelope");
  checkLogger(options.logger);
  if (options.validateResponses !== undefined && typeof options.validateResponses !== "boolean") {
    throw optionError("validateResponses", options.validateResponses, "true or false");
  }
  checkObject(options.contract, "contract", [
    "documents",
    "baseDir",
    "longAs",
    "importRoot",
    "schemaLocations",
    "strict",
    "logger",
  ]);
  checkStrict(options.contract?.strict, "contract.strict");
  checkLogger(options.contract?.logger, "contract.logger");
  if (options.contract?.documents !== undefined)
    memoryDocuments(options.contract.documents, "contract.documents");
  for (const key of ["baseDir", "importRoot"] as const) {
    const dir = options.contract?.[key];
    if (dir !== undefined && (typeof dir !== "string" || dir === "")) {
      throw optionError(`contract.${key}`, dir, "a directory path");
    }
  }
  checkLongAs(options.contract?.longAs, "contract.longAs");
  checkSchemaLocations(options.contract?.schemaLocations, "contract.schemaLocations");
  const wsSecurity = resolveWsSecurity(options.wsSecurity);
  if (options.addressing !== undefined && typeof options.addressing !== "boolean") {
    throw optionError("addressing", options.addressing, "true or false");
  }
  const addressing = options.addressing !== false;
  const mtom = resolveMtom(options.mtom, limits.maxBytes);
  // A tolerant load's defects go to the endpoint's logger unless the contract names its own.
  const contract = loadContract(options.wsdl, {
    ...options.contract,
    ...(options.contract?.logger === undefined && options.logger !== undefined
      ? { logger: options.logger }
      : {}),
  });
  checkHandlers(contract, options.handlers);
  const versions = contract.versions;
  const served = Object.freeze(versions.map((v) => (v === "1.2" ? SOAP12_MEDIA_TYPE : SOAP11_MEDIA_TYPE)));
  // The blocks this node processes; before credentials are decided, the others' content is not parsed.
  const understood = compileNameSet([
    ...understoodHeaders,
    ...(options.authenticate ? (authenticateHeaders ?? [`{${WSSE_NS}}Security`, "{*}Authentication"]) : []),
    ...(wsSecurity ? [`{${WSSE_NS}}Security`] : []),
    ...(addressing ? ADDRESSING_HEADERS.map((local) => `{${WSA_NS}}${local}`) : []),
  ]);
  return {
    contract,
    handlers: options.handlers,
    authenticate: options.authenticate,
    authorize: options.authorize,
    wsSecurity: wsSecurity && wsSecurityProcessor(wsSecurity),
    logger: options.logger,
    limits,
    checkpoint: envelopeCheckpoint(
      limits,
      options.authenticate !== undefined || wsSecurity !== undefined,
      new XmlTemplates(),
      understood,
    ),
    bodyTimeoutMs,
    unreadBody,
    roles: new Set(roles),
    understood,
    soap12: routesOf(contract.bindings["1.2"]),
    soap11: routesOf(contract.bindings["1.1"]),
    versions,
    upgrade: upgradeHeader(versions),
    acceptPost: served.join(", "),
    posted: POSTED,
    postedAs: Object.freeze({ ...POSTED, consumes: served }),
    mtom,
    xopLimits: { ...limits, maxBytes: limits.maxBytes + limits.maxExpandedBytes },
    addressing: addressing ? new AddressingSupport(contract) : undefined,
  };
}

/** A binding's operations as {@link Routes}; undefined without the binding. */
function routesOf(operations: readonly ContractOperation[] | undefined): Routes | undefined {
  if (operations === undefined) return undefined;
  const byAction = new Map<string, Route>();
  const byElement = new Map<string, Route>();
  const byName = new Map<string, Route>();
  // A soapAction need not be unique (WS-I Basic Profile 1.1 R2710 asks only that the operations'
  // wire signatures, their Body elements, differ): one several operations share names none of
  // them, and the Body element routes those messages.
  const sharedActions = new Set<string>();
  for (const op of operations) {
    // The Body's first child routes: the input element, the rpc wrapper, the first part; "" for
    // an empty Body.
    const first = op.inputBody[0] ?? "";
    const close = first.lastIndexOf("}");
    // Interned, as the parse's template names are: each message's Body element is compared with
    // these (checkBody).
    const routed: Route = {
      op,
      namespace: interned(first.startsWith("{") ? first.slice(1, close) : ""),
      localName: interned(first.startsWith("{") ? first.slice(close + 1) : first),
    };
    byName.set(op.name, routed);
    if (op.soapAction && byAction.has(op.soapAction)) sharedActions.add(op.soapAction);
    else if (op.soapAction) byAction.set(op.soapAction, routed);
    const before = byElement.get(first);
    // Operations that take one Body element are told apart by their actions (loadContract).
    if (before === undefined) byElement.set(first, routed);
    else if (before.shared === undefined) byElement.set(first, { ...before, shared: [before.op, op] });
    else (before.shared as ContractOperation[]).push(op);
  }
  for (const action of sharedActions) byAction.delete(action);
  return { byAction, byElement, byName };
}

/**
 * SOAP 1.2 Part 1 §2.2: roles are URIs; `next` and `ultimateReceiver` are always played, and
 * "SOAP nodes MUST NOT act in" the `none` role.
 */
function checkRoles(value: unknown): readonly string[] {
  if (value === undefined) return [];
  const isRole = (r: unknown) =>
    typeof r === "string" && /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(r) && r !== ROLE_NONE;
  if (!Array.isArray(value) || !value.every(isRole)) {
    throw optionError(
      "roles",
      value,
      "a list of absolute role URIs, not the none role (SOAP 1.2 Part 1 §2.2)",
    );
  }
  return value;
}

/**
 * One handler per operation of the contract, and no handler for anything else: every handler
 * that matches no operation, and every operation without one, named in one error.
 */
function checkHandlers(contract: Contract, handlers: Readonly<Record<string, SoapHandler>>): void {
  const operations = contract.operations.map((o) => o.name);
  const unknown = Object.keys(handlers).filter((name) => !operations.includes(name));
  const missing = operations.filter((name) => !Object.hasOwn(handlers, name));
  const problems: string[] = [];
  for (const { operation, reason } of contract.notServed) {
    if (unknown.includes(operation)) {
      unknown.splice(unknown.indexOf(operation), 1);
      problems.push(`handler "${operation}" is for ${reason}, which this node does not serve`);
    }
  }
  if (unknown.length > 0) {
    problems.push(
      `${plural(unknown, "handler")} ${quoted(unknown)} ${unknown.length === 1 ? "matches" : "match"} no operation of the contract (${operations.join(", ")})`,
    );
  }
  if (missing.length > 0) problems.push(`no handler for ${plural(missing, "operation")} ${quoted(missing)}`);
  if (problems.length > 0) {
    throw codedOptionError("soap-envelope", "handlers", `@svc/soap-envelope: ${problems.join("; ")}`);
  }
  for (const name of Object.keys(handlers)) {
    if (typeof handlers[name] !== "function") {
      throw optionError(
        "handlers",
        handlers[name],
        "a function (payload, context) => result",
        `@svc/soap-envelope: handlers.${name}`,
      );
    }
  }
}

function plural(names: readonly string[], noun: string): string {
  return names.length === 1 ? noun : `${noun}s`;
}

function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(", ");
}

/** A request's `Content-Type`, parsed, with what the exchange reads of it. */
export interface MessageType {
  /** The media type, its parameters' names lower-cased (`readMediaType` of the binding). */
  media: { readonly type: string; readonly parameters: Readonly<Record<string, string>> };
  /** The `charset` parameter, lower-cased. */
  charset: string | undefined;
  /** The `action` parameter (Part 2 §7.1.4). */
  action: string | undefined;
  /** Whether it is SOAP 1.1's `text/xml` (SOAP 1.1 §6.1.1). */
  soap11: boolean;
  /**
   * A multipart/related XOP package (SOAP MTOM §3), its SOAP version and action from `start-info`;
   * `charset` is then its root part's, read with it.
   */
  xop: boolean;
  /** A parameter name given more than once (RFC 6838 §4.3), lower-cased: the message is refused. */
  repeated: string | undefined;
}

function compileNameSet(names: readonly string[]): (element: XmlElement) => boolean {
  const exact = new Set<string>();
  const anyNs = new Set<string>();
  for (const n of names) {
    if (n.startsWith("{*}")) anyNs.add(n.slice(3));
    else exact.add(n);
  }
  return (element) => anyNs.has(element.localName) || exact.has(clark(element.namespace, element.localName));
}
