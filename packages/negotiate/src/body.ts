import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, type NextFunction, parseMediaType } from "@svc/errors";
import { SaxesParser } from "saxes";

/** Options of {@link parseBody}. */
export interface ParseBodyOptions {
  /**
   * Largest accepted body in bytes; larger → 413.
   * @default 102400 (100 KiB)
   */
  limit?: number;
  /**
   * Deepest accepted nesting of JSON arrays/objects or XML elements; deeper → 400.
   * @default 32
   */
  depth?: number;
  /**
   * Body media types accepted; `json` covers `application/json` and any `+json`, `xml` covers
   * `application/xml`, `text/xml` and any `+xml`.
   * @default ["json", "xml"]
   */
  types?: ReadonlyArray<"json" | "xml">;
  /**
   * Milliseconds allowed to receive the whole body, counted from when this middleware starts
   * reading it; a body still incomplete then → 408 with `Connection: close` (RFC 9110 §15.5.9),
   * so a client that sends headers and then trickles or stalls the body cannot hold the request
   * open for the server's own, much longer limit. `false` switches it off.
   * @default 30000
   */
  timeout?: number | false;
}

/** A request after {@link parseBody}: `body` holds the parsed value (`undefined` without a body). */
export interface ParsedBodyRequest extends IncomingMessage {
  body?: unknown;
}

/** A parsed XML element: attributes as `@name`, text as `#text` when mixed, repeated children as arrays. */
export type XmlValue = string | { [name: string]: XmlValue | XmlValue[] };

function isJson(mediaType: string): boolean {
  return mediaType === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType);
}

function isXml(mediaType: string): boolean {
  return (
    mediaType === "application/xml" ||
    mediaType === "text/xml" ||
    /^application\/[a-z0-9.!#$&^_-]+\+xml$/.test(mediaType)
  );
}

function jsonDepth(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v !== null && typeof v === "object") {
      if (d > limit) return false;
      for (const child of Object.values(v)) stack.push([child, d + 1]);
    }
  }
  return true;
}

/**
 * Parses XML into plain objects with `saxes`: elements become keys, repeated elements arrays,
 * attributes `@name`, text-only elements strings. A DOCTYPE is refused outright, which shuts out
 * entity-expansion and external-entity attacks before they start.
 *
 * @example parseXmlBody("<a x='1'><b>2</b><b>3</b></a>") // → { a: { "@x": "1", b: ["2", "3"] } }
 * @see https://www.w3.org/TR/xml/
 */
export function parseXmlBody(source: string, maxDepth = 32): Record<string, XmlValue> {
  const parser = new SaxesParser();
  interface Frame {
    name: string;
    obj: Record<string, XmlValue | XmlValue[]>;
    text: string;
    children: number;
  }
  const stack: Frame[] = [];
  let result: Record<string, XmlValue> | undefined;
  let failure: Error | undefined;
  const fail = (message: string) => {
    failure ??= new Error(message);
  };
  parser.on("doctype", () => fail("DOCTYPE is not allowed"));
  parser.on("error", (e) => fail(e.message));
  parser.on("opentag", (tag) => {
    if (stack.length >= maxDepth) fail(`XML is nested deeper than ${maxDepth} levels`);
    const obj: Record<string, XmlValue | XmlValue[]> = {};
    for (const [k, v] of Object.entries(tag.attributes)) obj[`@${k}`] = String(v);
    const parent = stack[stack.length - 1];
    if (parent) parent.children++;
    stack.push({ name: tag.name, obj, text: "", children: 0 });
  });
  const onText = (t: string) => {
    const top = stack[stack.length - 1];
    if (top) top.text += t;
  };
  parser.on("text", onText);
  parser.on("cdata", onText);
  parser.on("closetag", () => {
    const frame = stack.pop();
    if (!frame) return;
    const text = frame.text.trim();
    const value: XmlValue =
      frame.children === 0 && Object.keys(frame.obj).length === 0
        ? frame.text
        : text === ""
          ? frame.obj
          : Object.assign(frame.obj, { "#text": text });
    const parent = stack[stack.length - 1];
    if (!parent) {
      result = { [frame.name]: value };
      return;
    }
    const existing = parent.obj[frame.name];
    if (existing === undefined) parent.obj[frame.name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else parent.obj[frame.name] = [existing, value];
  });
  try {
    parser.write(source);
    if (failure === undefined) parser.close();
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
  if (failure) throw failure;
  if (!result) throw new Error("XML document has no root element");
  return result;
}

/** Strict: a malformed sequence throws; a BOM is kept, as `Buffer#toString` kept it. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/**
 * Request body middleware for JSON and XML (with `saxes`), in the service's error vocabulary:
 *
 * - a body with a missing or unsupported `Content-Type` → 415 naming the accepted types, with
 *   `Accept-Post` (POST) or `Accept-Patch` (PATCH) listing them (RFC 9110 §15.5.16, RFC 5789 §3.1);
 * - a body in a content coding other than identity → 415 (RFC 9110 §15.5.16);
 * - longer than `limit` → 413; not UTF-8, malformed, too deep, or an XML DOCTYPE → 400.
 *
 * Requests without a body pass untouched, with `req.body` undefined.
 *
 * @example app.use(parseBody({ limit: 64 * 1024 }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16
 */
export function parseBody(options: ParseBodyOptions = {}) {
  const limit = options.limit ?? 102_400;
  const depth = options.depth ?? 32;
  const types = options.types ?? ["json", "xml"];
  if (!Number.isInteger(limit) || limit < 0)
    throw new TypeError("parseBody: limit must be a non-negative integer");
  if (!Number.isInteger(depth) || depth < 1)
    throw new TypeError("parseBody: depth must be a positive integer");
  if (types.length === 0 || types.some((t) => t !== "json" && t !== "xml")) {
    throw new TypeError('parseBody: types must be a non-empty list of "json" and "xml"');
  }
  const timeout = options.timeout === undefined ? 30_000 : options.timeout;
  // setTimeout's largest delay (2^31 - 1 ms); a longer one would fire at once.
  if (timeout !== false && (!Number.isInteger(timeout) || timeout < 1 || timeout > 2_147_483_647)) {
    throw Object.assign(
      new TypeError(
        `parseBody: timeout must be false or a whole number of milliseconds from 1 to 2147483647, got ${String(timeout)}`,
      ),
      { code: "ERR_SVC_NEGOTIATE_TIMEOUT" },
    );
  }
  const accepted = [
    ...(types.includes("json") ? ["application/json"] : []),
    ...(types.includes("xml") ? ["application/xml"] : []),
  ];
  const acceptedHeader = accepted.join(", ");

  return function parseBodyMiddleware(
    req: ParsedBodyRequest,
    _res: ServerResponse,
    next: NextFunction,
  ): void {
    if (req.body !== undefined || !hasBody(req)) {
      next();
      return;
    }
    const unsupported = (message: string) => {
      const headers: Record<string, string> = {};
      if (req.method === "POST") headers["Accept-Post"] = acceptedHeader;
      if (req.method === "PATCH") headers["Accept-Patch"] = acceptedHeader;
      req.resume();
      next(HttpError.unsupportedMediaType(message, { headers, code: "unsupported_media_type" }));
    };
    const coding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
    if (coding !== "identity") {
      unsupported(`Content-Encoding "${coding}" is not supported; send the body uncoded`);
      return;
    }
    const contentType = req.headers["content-type"];
    // RFC 9110 §8.3.1; a malformed value (`application/json; charset`) names no type we accept.
    const parsed = contentType === undefined ? undefined : parseMediaType(contentType);
    const mediaType = parsed ? `${parsed.type}/${parsed.subtype}` : (contentType ?? "").trim().toLowerCase();
    const kind =
      types.includes("json") && isJson(mediaType)
        ? "json"
        : types.includes("xml") && isXml(mediaType)
          ? "xml"
          : undefined;
    if (kind === undefined) {
      unsupported(
        contentType === undefined
          ? `A request body needs a Content-Type; accepted: ${acceptedHeader}`
          : `Content-Type "${mediaType}" is not supported; accepted: ${acceptedHeader}`,
      );
      return;
    }
    const charset = parsed?.parameters.find(([name]) => name === "charset")?.[1].toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8" && charset !== "us-ascii") {
      unsupported(`charset "${charset}" is not supported; send UTF-8`);
      return;
    }
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      next(
        HttpError.contentTooLarge(`The request body exceeds ${limit} bytes`, { code: "content_too_large" }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err?: unknown) => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      next(err);
    };
    if (timeout !== false) {
      timer = setTimeout(() => {
        // RFC 9110 §15.5.9: the server SHOULD send the "close" connection option with a 408, as
        // the rest of the body may still arrive.
        finish(
          new HttpError(408, `The request body was not received within ${timeout} ms`, {
            code: "request_timeout",
            headers: { Connection: "close" },
          }),
        );
        chunks.length = 0;
      }, timeout);
      timer.unref();
    }
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        finish(
          HttpError.contentTooLarge(`The request body exceeds ${limit} bytes`, { code: "content_too_large" }),
        );
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", (err) =>
      finish(HttpError.badRequest("The request body could not be read", { cause: err })),
    );
    req.on("end", () => {
      if (done) return;
      let source: string;
      try {
        source = utf8.decode(Buffer.concat(chunks));
      } catch {
        // RFC 8259 §8.1: JSON text exchanged between systems MUST be UTF-8 (and XML declared or
        // defaulted to it here); invalid bytes are refused rather than replaced by U+FFFD.
        finish(
          HttpError.badRequest(`Malformed ${kind === "json" ? "JSON" : "XML"} body: not valid UTF-8`, {
            code: "malformed_body",
          }),
        );
        return;
      }
      try {
        if (kind === "json") {
          const value: unknown = JSON.parse(source);
          if (!jsonDepth(value, depth)) throw new Error(`JSON is nested deeper than ${depth} levels`);
          req.body = value;
        } else {
          req.body = parseXmlBody(source, depth);
        }
        finish();
      } catch (err) {
        finish(
          HttpError.badRequest(
            `Malformed ${kind === "json" ? "JSON" : "XML"} body: ${(err as Error).message}`,
            {
              code: "malformed_body",
            },
          ),
        );
      }
    });
  };
}
