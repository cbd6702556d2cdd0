import { parseMediaType as parseFieldMediaType } from "@svc/kernel";

/** A parsed `Content-Type` value. */
export interface MediaType {
  /** Lower-cased `type/subtype`. */
  type: string;
  /**
   * Parameters, names lower-cased, quoted values unquoted; the first of a repeated name wins here
   * (the endpoint refuses such a message with 415, RFC 6838 §4.3).
   */
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
  return readMediaType(value)?.media;
}

/**
 * {@link parseMediaType}, with the first parameter name the value gives more than once
 * (lower-cased), which a receiver refuses: RFC 6838 §4.3, "It is an error for a specific parameter
 * to be specified more than once", names compared case-insensitively (RFC 9110 §5.6.6). Another
 * reader of the field (a firewall filtering on `action`, RFC 3902 §3; a logger; a signature check)
 * may take the last of two where this one took the first.
 */
export function readMediaType(
  value: string | undefined,
): { media: MediaType; repeated: string | undefined } | undefined {
  if (value === undefined) return undefined;
  const parsed = parseFieldMediaType(value);
  if (parsed === undefined || parsed.type === "*" || parsed.subtype === "*") return undefined;
  // A null prototype: a parameter named `__proto__` or `constructor` is only data.
  const parameters: Record<string, string> = Object.create(null);
  let repeated: string | undefined;
  for (const [name, v] of parsed.parameters) {
    if (!(name in parameters)) parameters[name] = v;
    else repeated ??= name;
  }
  return { media: { type: `${parsed.type}/${parsed.subtype}`, parameters }, repeated };
}
