/**
 * Whether a `Content-Encoding` field value says the content is coded: any coding but `identity`
 * (RFC 9110 §8.4: "identity" is reserved for "no encoding" and is not sent in the field).
 *
 * @example isCodedContent("gzip") // true
 * @example isCodedContent(null) // false
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.4
 */
export function isCodedContent(contentEncoding: string | null | undefined): boolean {
  if (contentEncoding === null || contentEncoding === undefined) return false;
  const coding = contentEncoding.trim().toLowerCase();
  return coding !== "" && coding !== "identity";
}

/**
 * `new Response(body, init)`; when `coded` (the body's bytes are already content-coded, as its
 * `Content-Encoding` says), built with `encodeBody: "manual"` and carrying that member itself.
 * Cloudflare Workers encode a `Response`'s body by its `Content-Encoding` unless it was built with
 * `encodeBody: "manual"`: a coded body would be coded twice. Other runtimes ignore the member, as
 * WebIDL has a dictionary ignore members it does not define. The member on the `Response` itself is
 * what a copy made as `new Response(response.body, response)` (Hono does so when a middleware
 * sets `c.res` or a field after the route) reads again, and what {@link isCodedBody} reads.
 *
 * @example buildResponse(gzipped, { status: 200, headers }, true)
 * @see https://developers.cloudflare.com/workers/runtime-apis/response/#parameters
 *
 * @internal
 */
export function buildResponse(
  body: ConstructorParameters<typeof Response>[0],
  init: ResponseInit,
  coded: boolean,
): Response {
  if (!coded) return new Response(body, init);
  const response = new Response(body, { ...init, encodeBody: "manual" } as ResponseInit);
  Object.defineProperty(response, "encodeBody", { value: "manual" });
  return response;
}

/**
 * Whether `response` was built by {@link buildResponse} with a coded body (or, on a runtime that
 * shows it, with `encodeBody: "manual"`): a copy around its body must be built so too.
 *
 * @example const copy = buildResponse(watched, { status, headers }, isCodedBody(response));
 *
 * @internal
 */
export function isCodedBody(response: Response): boolean {
  return (response as { encodeBody?: unknown }).encodeBody === "manual";
}
