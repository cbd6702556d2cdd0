import { parseMediaType as parseFieldMediaType } from "@svc/errors";

/** A parsed `Content-Type` value. */
export interface MediaType {
  /** Lower-cased `type/subtype`. */
  type: string;
  /** Parameters, names lower-cased, quoted values unquoted; the first of a repeated name wins. */
  parameters: Record<string, string>;
}

/**
 * Parses a media type with its parameters (RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS
 * parameter )`, parameter values a token or a quoted-string), with the shared grammar of
 * `@svc/errors`. Returns undefined when malformed or not a concrete type. SOAP 1.2 carries the
 * operation in the `action` parameter (RFC 3902 §1).
 *
 * @example parseMediaType('application/soap+xml; charset=utf-8; action="urn:getCustomer"')
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.3.1
 */
export function parseMediaType(value: string | undefined): MediaType | undefined {
  if (value === undefined) return undefined;
  const parsed = parseFieldMediaType(value);
  if (parsed === undefined || parsed.type === "*" || parsed.subtype === "*") return undefined;
  // A null prototype: a parameter named `__proto__` or `constructor` is only data.
  const parameters: Record<string, string> = Object.create(null);
  for (const [name, v] of parsed.parameters) if (!(name in parameters)) parameters[name] = v;
  return { type: `${parsed.type}/${parsed.subtype}`, parameters };
}
