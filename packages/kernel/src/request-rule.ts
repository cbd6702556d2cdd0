import { isToken, parseMediaType } from "./grammar.js";
import { HttpError } from "./http-error.js";
import { refusedOption } from "./option-error.js";
import { shown } from "./shown.js";

/**
 * What a route takes in a request, decided from its header section before any of its content is
 * read: a route that runs nothing for a request it refuses need not read what it refuses.
 */
export interface RequestRule {
  /**
   * The methods the route allows, compared as sent (RFC 9110 §9.1: methods are case-sensitive,
   * `post` is no POST): any other is refused with 405 and `Allow` naming these (§15.5.6).
   * @default undefined (every method the router sends)
   */
  readonly methods?: readonly string[] | undefined;
  /**
   * The media types (`type/subtype`, parameters aside) the content of a POST, PUT or PATCH may
   * have: any other, or none named, is refused with 415 (RFC 9110 §15.5.16), a POST's naming
   * these in `Accept-Post` and a PATCH's in `Accept-Patch` (RFC 5789 §3.1). Content of another
   * method has no semantics a route takes (§9.3.1, §9.3.2, §9.3.5), so it is not looked at.
   * @default undefined (not checked)
   */
  readonly consumes?: readonly string[] | undefined;
  /**
   * The content codings, `identity` aside, the route decodes in the content of a POST, PUT or
   * PATCH: content coded otherwise is refused with 415 and `Accept-Encoding` naming these and
   * `identity` (RFC 9110 §8.4.1, §12.5.3). `[]`: uncoded content only.
   * @default undefined (not checked)
   */
  readonly contentCodings?: readonly string[] | undefined;
}

/** The fields of a request {@link refuseRequest} decides on, as received. */
export interface RequestHead {
  /** The method, as received. */
  readonly method: string;
  /** The `Content-Type` field's value. */
  readonly contentType?: string | undefined;
  /** The `Content-Encoding` field's value. */
  readonly contentEncoding?: string | undefined;
}

/** Methods whose content a route takes (RFC 9110 §9.3.3, §9.3.4; RFC 5789 §2). */
const WITH_CONTENT = new Set(["POST", "PUT", "PATCH"]);

/** The characters of a value from the request that a refusal's message shows. */
const SHOWN = 40;

/**
 * The refusal of a request by what its route takes ({@link RequestRule}), or `undefined`: 405 for a
 * method the route does not allow, then 415 for a content coding it does not decode, then 415 for
 * a media type it does not read. A pure function of the request's fields: the pipeline decides it
 * before a route's handler (`RouteOptions`), and a binding that reads its own messages (the SOAP
 * HTTP binding) before reading one.
 *
 * @example refuseRequest({ method: "PUT" }, { methods: ["POST"] }) // the 405, Allow: POST
 * @example refuseRequest({ method: "POST", contentType: "text/plain" }, { consumes: ["application/json"] }) // the 415, Accept-Post: application/json
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6 — 405, with Allow
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16 — 415, with Accept-Post, Accept-Patch or Accept-Encoding
 */
export function refuseRequest(request: RequestHead, rule: RequestRule): HttpError | undefined {
  const method = request.method;
  const methods = rule.methods;
  if (methods !== undefined && !methods.includes(method)) {
    return HttpError.methodNotAllowed(methods, `${shown(String(method), SHOWN)} is not allowed here`);
  }
  const consumes = rule.consumes;
  const codings = rule.contentCodings;
  if ((consumes === undefined && codings === undefined) || !WITH_CONTENT.has(method)) return undefined;
  if (codings !== undefined && request.contentEncoding !== undefined) {
    const refusal = refuseCoding(request.contentEncoding, codings);
    if (refusal !== undefined) return refusal;
  }
  if (consumes !== undefined && !takes(consumes, request.contentType)) {
    const field = method === "POST" ? "Accept-Post" : method === "PATCH" ? "Accept-Patch" : undefined;
    return HttpError.unsupportedMediaType(
      `Content-Type must be ${consumes.join(" or ")}`,
      field === undefined ? undefined : { headers: { [field]: consumes.join(", ") } },
    );
  }
  return undefined;
}

/**
 * RFC 9110 §8.4.1: `Content-Encoding` lists the codings applied, in order; each must be one the
 * route decodes. `identity` alone (or an empty field) is content as it is; §12.5.3: "identity" is
 * always acceptable, so `Accept-Encoding` names it.
 */
function refuseCoding(value: string, codings: readonly string[]): HttpError | undefined {
  const coding = value.trim().toLowerCase();
  if (coding === "" || coding === "identity") return undefined;
  const decoded = (c: string) => codings.some((d) => d.toLowerCase() === c.trim());
  if (codings.length > 0 && coding.split(",").every(decoded)) return undefined;
  const hint =
    codings.length === 0 ? "send the message uncoded" : `send it coded ${codings.join(" or ")}, or uncoded`;
  return HttpError.unsupportedMediaType(
    `Content-Encoding "${shown(coding, SHOWN)}" is not supported; ${hint}`,
    {
      headers: { "Accept-Encoding": [...codings, "identity"].join(", ") },
    },
  );
}

/** Whether `value` names one of `consumes` (a media type, not a range; RFC 9110 §8.3.1). */
function takes(consumes: readonly string[], value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = parseMediaType(value);
  if (type === undefined || type.type === "*" || type.subtype === "*") return false;
  const essence = `${type.type}/${type.subtype}`;
  return consumes.some((c) => c.toLowerCase() === essence);
}

/** The rules already checked: a route's options are checked once, not on each of its requests. */
const CHECKED = new WeakSet<object>();

/**
 * Checks a route's {@link RequestRule} once (`ERR_SVC_KERNEL_METHODS`, `..._CONSUMES`,
 * `..._CONTENT_CODINGS`): a list of methods (tokens, RFC 9110 §9.1), of media types
 * (`type/subtype`, no range: a request's content has one type, §8.3.1) and of content codings
 * (tokens, §8.4.1). A string where a list belongs (`methods: "POST"`) would be read a character
 * at a time and refuse every method but `P`, `O`, `S` and `T`; a range (`application/*`) would
 * match no request. Each is refused where the route is declared, not at its first request.
 *
 * @example checkRequestRule({ methods: ["POST"], consumes: ["application/json"] });
 * @internal
 */
export function checkRequestRule(rule: RequestRule): void {
  if (CHECKED.has(rule)) return;
  checkList(rule.methods, "methods", "a list of methods (tokens, RFC 9110 §9.1)", isToken);
  checkList(rule.consumes, "consumes", "a list of media types type/subtype (RFC 9110 §8.3.1)", isMediaType);
  checkList(
    rule.contentCodings,
    "contentCodings",
    "a list of content codings (tokens, RFC 9110 §8.4.1)",
    isToken,
  );
  CHECKED.add(rule);
}

function checkList(
  given: unknown,
  option: string,
  accepted: string,
  valid: (value: string) => boolean,
): void {
  if (given === undefined) return;
  if (!Array.isArray(given) || !given.every((value) => typeof value === "string" && valid(value)))
    throw refusedOption("kernel", option, given, accepted, `route: ${option}`);
}

function isMediaType(value: string): boolean {
  const type = parseMediaType(value);
  return type !== undefined && type.type !== "*" && type.subtype !== "*" && type.parameters.length === 0;
}
