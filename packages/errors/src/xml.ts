import type { ErrorRecord, ProblemDetails } from "./record.js";

const XML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/**
 * Escapes text for XML content and attributes, and drops characters XML 1.0 §2.2 does not
 * allow at all (C0 controls other than tab, CR and LF, lone surrogates, U+FFFE/U+FFFF), so a
 * hostile path or message cannot make the document ill-formed.
 */
export function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/[&<>"']/g, (c) => XML_ESCAPES[c] ?? c);
}

function fieldErrorsXml(errors: ErrorRecord["errors"]): string {
  if (!errors) return "";
  const items = errors
    .map(
      (e) => `<error><field>${escapeXml(e.field)}</field><message>${escapeXml(e.message)}</message></error>`,
    )
    .join("");
  return `<errors>${items}</errors>`;
}

/** The error record as `<error>…</error>`, same fields and order as the JSON record. */
export function errorRecordToXml(record: ErrorRecord): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<error>' +
    `<timestamp>${escapeXml(record.timestamp)}</timestamp>` +
    `<status>${record.status}</status>` +
    `<error>${escapeXml(record.error)}</error>` +
    `<message>${escapeXml(record.message)}</message>` +
    `<path>${escapeXml(record.path)}</path>` +
    fieldErrorsXml(record.errors) +
    "</error>"
  );
}

/**
 * Problem details in the RFC 9457 Appendix B XML form (namespace `urn:ietf:rfc:7807`).
 * @see https://www.rfc-editor.org/rfc/rfc9457#appendix-B
 */
export function problemDetailsToXml(problem: ProblemDetails): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<problem xmlns="urn:ietf:rfc:7807">' +
    `<type>${escapeXml(problem.type)}</type>` +
    `<title>${escapeXml(problem.title)}</title>` +
    `<status>${problem.status}</status>` +
    `<detail>${escapeXml(problem.detail)}</detail>` +
    `<instance>${escapeXml(problem.instance)}</instance>` +
    `<timestamp>${escapeXml(problem.timestamp)}</timestamp>` +
    (problem.code ? `<code>${escapeXml(problem.code)}</code>` : "") +
    fieldErrorsXml(problem.errors) +
    "</problem>"
  );
}
