/**
 * What an {@link HttpError} may carry beside its status and message: RFC 9457 §3.2 extension
 * members, named so that every format of the error record (JSON, problem details, their XML forms)
 * can carry them, and never one of the record's or the problem's own members.
 */

/**
 * How many extension members one error carries at most; `HttpError` refuses more (the error
 * record's limits, `ERROR_RECORD_LIMITS.extensionMembers` of `@svc/errors`, are this number).
 *
 * @internal
 */
export const MAX_EXTENSION_MEMBERS = 100;

/**
 * The record's own members; any other member of a record is an extension.
 *
 * @internal
 */
export const RECORD_MEMBERS: ReadonlySet<string> = new Set([
  "timestamp",
  "status",
  "error",
  "message",
  "path",
  "errors",
]);
/**
 * The problem details' own members; any other member is an extension.
 *
 * @internal
 */
export const PROBLEM_MEMBERS: ReadonlySet<string> = new Set([
  "type",
  "title",
  "status",
  "detail",
  "instance",
  "timestamp",
  "code",
  "errors",
]);
/**
 * RFC 9457 §3.2: an extension member's name starts with a letter and holds only letters, digits
 * and `_`, so that it is an XML element name as it is (Appendix B).
 *
 * @internal
 */
export const EXTENSION_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * XML 1.0 §2.3: "Names beginning with the string "xml", or with any string which would match
 * (('X'|'x') ('M'|'m') ('L'|'l')), are reserved for standardization in this or future versions of
 * this specification." Namespaces in XML 1.0 §3 gives `xmlns` and the `xml` prefix their meaning.
 */
const XML_RESERVED = /^xml/i;

/**
 * Whether `name` can be an extension member's name in every format: {@link EXTENSION_NAME}
 * (RFC 9457 §3.2), and not one of the names XML 1.0 §2.3 reserves (`xml`, `xmlns`, `XMLSchema`,
 * any case), since the member becomes an element of that name in the XML forms (Appendix B).
 *
 * @internal
 */
export function isExtensionName(name: string): boolean {
  return EXTENSION_NAME.test(name) && !XML_RESERVED.test(name);
}
