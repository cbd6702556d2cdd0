/**
 * Reason phrases as RFC 9110 §15 names them, and the other codes of the IANA registry as Node.js
 * names them (`http.STATUS_CODES`, whose table still carries a few RFC 7231 names such as
 * "Payload Too Large": the record follows the current standard). A table of its own, not
 * `node:http`'s: the main entry runs where there is no Node.js.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15
 * @see https://www.iana.org/assignments/http-status-codes/http-status-codes.xhtml
 */
const PHRASES: Readonly<Record<number, string>> = {
  100: "Continue",
  101: "Switching Protocols",
  102: "Processing",
  103: "Early Hints",
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "Non-Authoritative Information",
  204: "No Content",
  205: "Reset Content",
  206: "Partial Content",
  207: "Multi-Status",
  208: "Already Reported",
  226: "IM Used",
  300: "Multiple Choices",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  305: "Use Proxy",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  418: "I'm a Teapot",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  506: "Variant Also Negotiates",
  507: "Insufficient Storage",
  508: "Loop Detected",
  509: "Bandwidth Limit Exceeded",
  510: "Not Extended",
  511: "Network Authentication Required",
};

/**
 * The reason phrase of an HTTP status code, e.g. `reasonPhrase(404) === "Not Found"`.
 * Unknown codes get the phrase of their class ("Client Error", "Server Error").
 *
 * @example reasonPhrase(429) // "Too Many Requests"
 */
export function reasonPhrase(status: number): string {
  const phrase = PHRASES[status];
  if (phrase) return phrase;
  if (status >= 500) return "Server Error";
  if (status >= 400) return "Client Error";
  return "Unknown Status";
}

/** True for an integer in the error range 400..599. */
export function isErrorStatus(status: unknown): status is number {
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599;
}
