import { STATUS_CODES } from "node:http";

/**
 * Reason phrases as RFC 9110 §15 names them. Node's table still carries a few RFC 7231 names
 * ("Payload Too Large", "Unprocessable Entity"); the record follows the current standard.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15
 */
const RFC9110_PHRASES: Readonly<Record<number, string>> = {
  413: "Content Too Large",
  414: "URI Too Long",
  416: "Range Not Satisfiable",
  422: "Unprocessable Content",
};

/**
 * The reason phrase of an HTTP status code, e.g. `reasonPhrase(404) === "Not Found"`.
 * Unknown codes get the phrase of their class ("Client Error", "Server Error").
 *
 * @example reasonPhrase(429) // "Too Many Requests"
 */
export function reasonPhrase(status: number): string {
  const phrase = RFC9110_PHRASES[status] ?? STATUS_CODES[status];
  if (phrase) return phrase;
  if (status >= 500) return "Server Error";
  if (status >= 400) return "Client Error";
  return "Unknown Status";
}

/** True for an integer in the error range 400..599. */
export function isErrorStatus(status: unknown): status is number {
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599;
}
