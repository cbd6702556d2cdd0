/** A parsed `Content-Type` value. */
export interface MediaType {
  /** Lower-cased `type/subtype`. */
  type: string;
  /** Parameters, names lower-cased, quoted values unquoted. */
  parameters: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses a media type with its parameters (RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS
 * parameter )`, parameter values a token or a quoted-string). Returns undefined when malformed.
 *
 * @example parseMediaType('application/soap+xml; charset=utf-8; action="urn:getCustomer"')
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.3.1
 */
export function parseMediaType(value: string | undefined): MediaType | undefined {
  if (value === undefined) return undefined;
  const semi = value.indexOf(";");
  const type = (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
  const slash = type.indexOf("/");
  if (slash <= 0 || !TOKEN.test(type.slice(0, slash)) || !TOKEN.test(type.slice(slash + 1))) return undefined;
  const parameters: Record<string, string> = {};
  let i = semi === -1 ? value.length : semi + 1;
  while (i < value.length) {
    while (i < value.length && (value[i] === " " || value[i] === "\t" || value[i] === ";")) i++;
    if (i >= value.length) break;
    const eq = value.indexOf("=", i);
    if (eq === -1) return undefined;
    const name = value.slice(i, eq).trim().toLowerCase();
    if (!TOKEN.test(name)) return undefined;
    i = eq + 1;
    let v = "";
    if (value[i] === '"') {
      i++;
      while (i < value.length && value[i] !== '"') {
        if (value[i] === "\\") i++;
        v += value[i] ?? "";
        i++;
      }
      if (value[i] !== '"') return undefined;
      i++;
    } else {
      const end = value.indexOf(";", i);
      v = value.slice(i, end === -1 ? value.length : end).trim();
      i = end === -1 ? value.length : end;
    }
    if (!(name in parameters)) parameters[name] = v;
  }
  return { type, parameters };
}
