import { optionError } from "@svc/kernel/internal";
import { parseTemplate } from "url-template";
import { reservedExpansionChars } from "./uri-chars.js";

/**
 * A HAL Link Object: every attribute of draft-kelly-json-hal-11 §5.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-5
 */
export interface HalLink {
  /** §5.1: a URI, or a URI Template (RFC 6570) when `templated` is true. */
  href: string;
  /** §5.2: `href` is a URI Template. Omitted (not `false`) when it is not. */
  templated?: boolean;
  /** §5.3: a hint of the target's media type. */
  type?: string;
  /** §5.4: a URL that explains why the link is deprecated; its presence marks the link deprecated. */
  deprecation?: string;
  /** §5.5: a secondary key among links of the same relation (also the curie prefix). */
  name?: string;
  /** §5.6: a profile URI (RFC 6906) of the target. */
  profile?: string;
  /** §5.7: a human-readable label. */
  title?: string;
  /** §5.8: the language of the target (RFC 5646 tag). */
  hreflang?: string;
}

/** Values a URI Template variable may take (RFC 6570 §2.3: strings, lists and associative arrays). */
export type TemplateValue =
  | string
  | number
  | boolean
  | null
  | readonly (string | number | boolean | null)[]
  | Readonly<
      Record<string, string | number | boolean | null | readonly (string | number | boolean | null)[]>
    >;

/** Variables for {@link expandTemplate}. Undefined variables are left out, as RFC 6570 §2.3 says. */
export type TemplateVariables = Readonly<Record<string, TemplateValue | undefined>>;

const LINK_KEYS = [
  "href",
  "templated",
  "type",
  "deprecation",
  "name",
  "profile",
  "title",
  "hreflang",
] as const;

/**
 * Expands an RFC 6570 URI Template (all four levels: `{var}`, `{+path}`, `{#frag}`, `{.ext}`,
 * `{/seg}`, `{;param}`, `{?query}`, `{&more}`, explode and prefix modifiers) with the
 * `url-template` library.
 *
 * @example expandTemplate("/employees{?page,size,sort}", { page: 2, size: 20 }) // "/employees?page=2&size=20"
 * @see https://www.rfc-editor.org/rfc/rfc6570
 */
export function expandTemplate(template: string, variables: TemplateVariables = {}): string {
  if (typeof template !== "string") throw new TypeError("expandTemplate: template must be a string");
  checkTemplate(template, "expandTemplate: template");
  const context: Record<
    string,
    | string
    | number
    | boolean
    | null
    | (string | number | boolean | null)[]
    | Record<string, string | number | boolean | null | (string | number | boolean | null)[]>
  > = {};
  // RFC 6570 §2.3: "A variable defined as a list value is considered undefined if the list
  // contains zero members. A variable defined as an associative array of (name, value) pairs is
  // considered undefined if the array contains zero members or if all member names in the array
  // are associated with undefined values." url-template expands such a variable in {?x}, {&x}
  // and {;x} as "x=" (a filter on the empty value), so it is left out of the context here.
  for (const [key, value] of Object.entries(variables)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      if (value.some((v) => v !== null && v !== undefined)) context[key] = value.map(member);
    } else if (value !== null && typeof value === "object") {
      const map: Record<string, string | number | boolean | null | (string | number | boolean | null)[]> = {};
      let defined = false;
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        map[wellFormed(k)] = Array.isArray(v) ? v.map(member) : member(v as string | number | boolean | null);
        if (v !== null && v !== undefined) defined = true;
      }
      if (defined) context[key] = map;
    } else context[key] = wellFormed(value as string | number | boolean | null);
  }
  return expand(prefixesInCharacters(wellFormed(template), context), context);
}

// RFC 6570 §2.2: "operator = op-level2 / op-level3 / op-reserve"; op-reserve ("=" "," "!" "@"
// "|") is "reserved for future extensions". §2.3: "varname = varchar *( ["."] varchar )", "varchar
// = ALPHA / DIGIT / "_" / pct-encoded". §2.4: "modifier-level4 = prefix / explode", one at most;
// §2.4.1: "max-length = %x31-39 0*3DIGIT ; positive integer < 10000".
const VARSPEC =
  /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3}|\*)?$/;
const RESERVED_OPERATORS = "=,!@|";

/**
 * Why `template` is no RFC 6570 URI Template (§2), or undefined when it is one. Literals are not
 * narrowed beyond the braces: §3.1 expands any other character, percent-encoding what a URI
 * cannot carry, and so does {@link expandTemplate}.
 */
function templateFault(template: string): string | undefined {
  // §2.1: "{" and "}" are excluded from literals; without them there is no expression to check.
  if (!template.includes("{") && !template.includes("}")) return undefined;
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf("{", at);
    const close = template.indexOf("}", at);
    if (close !== -1 && (open === -1 || close < open))
      return `a "}" outside an expression at offset ${close}`;
    if (open === -1) return undefined;
    // §2.2: expression = "{" [ operator ] variable-list "}"
    if (close === -1) return `the expression at offset ${open} is never closed`;
    const body = template.slice(open + 1, close);
    if (body.includes("{")) return `a "{" inside the expression at offset ${open}`;
    const first = body.charAt(0);
    if (first !== "" && RESERVED_OPERATORS.includes(first)) {
      return `the operator "${first}" at offset ${open + 1} is reserved for future extensions (§2.2)`;
    }
    const operator = first !== "" && OPERATORS.includes(first) ? first : "";
    for (const spec of body.slice(operator.length).split(",")) {
      if (!VARSPEC.test(spec)) {
        return `${JSON.stringify(spec)} in the expression at offset ${open} is no varname (ALPHA, DIGIT, "_", pct-encoded, inner ".") with at most one modifier, ":1" to ":9999" or "*" (§2.3, §2.4)`;
      }
    }
    at = close + 1;
  }
  return undefined;
}

/**
 * Refuses a template the application gives that is no RFC 6570 URI Template (§2): an expression
 * left open, a stray brace, an unknown or reserved operator, a bad varname or modifier would
 * reach clients as it is, and each processor reads it its own way (url-template drops `{!x}`,
 * cuts `{x*:3}`, reads `{x:0}` as the empty string).
 */
export function checkTemplate(template: string, label: string): void {
  const fault = templateFault(template);
  if (fault !== undefined) {
    throw optionError(
      "hal",
      "template",
      `${label} must be an RFC 6570 URI Template, got ${JSON.stringify(template)}: ${fault}`,
    );
  }
}

// url-template's own split of a template into expressions and literals (RFC 6570 §2).
const PART = /\{([^{}]+)\}|[^{}]+/g;

/**
 * url-template's expansion, with its reserved encoding corrected. RFC 6570 §3.2.1: reserved
 * ("+") and fragment ("#") expansion pass "the union of ( unreserved / reserved / pct-encoded )"
 * through and pct-encode every other character. url-template cuts the text around pct-encoded
 * triplets and leaves a whole run as it is when that run holds a "%" and a hex digit: `{+path}`
 * of a client's `/a b<x>%1` gave the href `/a b<x>%1`, no URI, and `\..\` that a browser reads
 * as `/../`. Each reserved, fragment or literal part is re-encoded over its output, which for every
 * other value already is what §3.2.1 asks (an idempotent pass).
 */
function expand(
  template: string,
  context: Parameters<ReturnType<typeof parseTemplate>["expand"]>[0],
): string {
  return template.replace(PART, (part: string, expression: string | undefined) => {
    const expanded = parseTemplate(part).expand(context);
    const operator = expression?.charAt(0);
    return operator === undefined || operator === "+" || operator === "#"
      ? reservedExpansionChars(expanded)
      : expanded;
  });
}

// RFC 6570 §2.1: an expression is "{" [ operator ] variable-list "}"; §2.4.1: a varspec's prefix
// modifier is ":" max-length. Bounded by the braces and the commas, neither repetition overlapping.
const EXPRESSION = /\{([^{}]+)\}/g;
const PREFIXED = /^([^:*]*):(\d+)$/;
const OPERATORS = "+#./;?&";

/**
 * The template with each prefix modifier of a string variable counted in UTF-16 code units, the
 * unit url-template cuts the value in, for the same number of characters. RFC 6570 §2.4.1: "The
 * max-length is a positive integer that refers to a maximum number of characters from the
 * beginning of the variable's value as a Unicode string. Note that this numbering is in
 * characters, not octets, in order to avoid splitting between the octets of a multi-octet-encoded
 * character". Cut in code units, `{q:1}` of "😀" kept half a surrogate pair, on which
 * url-template's encodeURIComponent threw URIError.
 */
function prefixesInCharacters(template: string, context: Readonly<Record<string, unknown>>): string {
  if (!template.includes(":")) return template;
  return template.replace(EXPRESSION, (expression: string, body: string) => {
    if (!body.includes(":")) return expression;
    const operator = OPERATORS.includes(body.charAt(0)) ? body.charAt(0) : "";
    const specs = body
      .slice(operator.length)
      .split(",")
      .map((spec) => {
        const prefixed = PREFIXED.exec(spec);
        const name = prefixed?.[1];
        const value = name === undefined || !Object.hasOwn(context, name) ? undefined : context[name];
        if (prefixed === null || typeof value !== "string") return spec;
        const characters = Number(prefixed[2]);
        let units = 0;
        let count = 0;
        for (const character of value) {
          if (count === characters) break;
          units += character.length;
          count++;
        }
        return `${name}:${units}`;
      });
    return `{${operator}${specs.join(",")}}`;
  });
}

// An unpaired UTF-16 surrogate: a JSON text may carry one (RFC 8259 §8.2), JSON.parse keeps it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A string with every unpaired surrogate replaced by U+FFFD, as the WHATWG URL standard's UTF-8
 * percent-encode (and TextEncoder) encode it; url-template's encodeURIComponent throws URIError on
 * one, so a client's valid JSON became a 500. Anything else is returned as it is.
 */
function wellFormed<T>(value: T): T {
  return typeof value === "string" ? (value.replace(LONE_SURROGATE, "\uFFFD") as T) : value;
}

/**
 * A member of a list or associative array as the text it expands to (RFC 6570 §2.3: values are
 * strings). url-template's reserved expansion (`{+x}`, `{#x}`) calls `String#split` on a member,
 * which a number or a boolean, allowed by {@link TemplateValue}, does not have (TypeError).
 */
function member(value: string | number | boolean | null): string | null {
  // An undefined member (a map's `{ a: undefined }`) stays undefined: left out, not "undefined".
  return value === null || value === undefined ? value : wellFormed(String(value));
}

/**
 * Expands a templated link into a plain one (keeping every other attribute); a link that is not
 * templated is returned unchanged.
 *
 * @example expandLink({ href: "/employees/{id}", templated: true }, { id: 7 }) // { href: "/employees/7" }
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-5.2
 */
export function expandLink(link: HalLink, variables: TemplateVariables = {}): HalLink {
  if (link.templated !== true) return link;
  const { templated: _templated, ...rest } = link;
  return { ...rest, href: expandTemplate(link.href, variables) };
}

/**
 * Validates and normalises a link given as a string or a Link Object: drops `templated: false`
 * and unknown keys, rejects a missing `href` or a non-string attribute with a `TypeError`.
 *
 * @example toHalLink("/employees/7") // { href: "/employees/7" }
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-5
 */
export function toHalLink(link: string | HalLink): HalLink {
  if (typeof link === "string") return { href: link };
  if (link === null || typeof link !== "object" || typeof link.href !== "string") {
    throw new TypeError("HAL link must be a string or an object with a string href");
  }
  const out: Record<string, string | boolean> = {};
  for (const key of LINK_KEYS) {
    const value = link[key];
    if (value === undefined) continue;
    if (key === "templated") {
      if (typeof value !== "boolean") throw new TypeError("HAL link attribute templated must be a boolean");
      // draft-kelly-json-hal-11 §5.2: with templated true, href is a URI Template (RFC 6570).
      if (value) {
        checkTemplate(link.href, "HAL link href (templated)");
        out.templated = true;
      }
      continue;
    }
    if (typeof value !== "string") throw new TypeError(`HAL link attribute ${key} must be a string`);
    out[key] = value;
  }
  return out as unknown as HalLink;
}
