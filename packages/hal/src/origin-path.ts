/**
 * Whether `path` is an absolute path that stays on the origin it is put under or resolved against:
 * it starts with "/" and is no network-path reference ("//host", RFC 3986 §4.2), also not as the
 * WHATWG URL parser reads it, which browsers follow for `Location` and links. That parser drops
 * ASCII tab and newlines and reads "\" as "/" in http(s) URLs, so `/\evil.example` and
 * `/<tab>/evil.example` are `//evil.example` to it: another origin.
 *
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-4.2
 * @see https://url.spec.whatwg.org/#url-parsing
 */
export function isOriginPath(path: string): boolean {
  if (!path.startsWith("/")) return false;
  let i = 1;
  while (path[i] === "\t" || path[i] === "\n" || path[i] === "\r") i++;
  return path[i] !== "/" && path[i] !== "\\";
}
