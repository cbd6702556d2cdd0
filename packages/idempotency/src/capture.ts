import type { OutgoingHttpHeaders, ServerResponse } from "node:http";

/**
 * What a handler sent, as seen by {@link captureResponse}.
 *
 * @example const { status, body } = captured; // body is undefined when it outgrew the cap
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15
 */
export interface CapturedResponse {
  status: number;
  /** Every response header, lower-case names. */
  headers: OutgoingHttpHeaders;
  /** The body bytes, or `undefined` when it grew past the cap. */
  body: Buffer | undefined;
}

/** One header of a captured response, lower-case name (used by the middleware: no copy of them all). */
export const HEADER_OF = Symbol("@svc/idempotency header of");

/**
 * A {@link CapturedResponse} whose `headers` are copied from the response only when read: the
 * middleware stores a handful of them and asks for those alone.
 */
class Captured implements CapturedResponse {
  readonly status: number;
  readonly body: Buffer | undefined;
  readonly #res: ServerResponse;
  readonly #extra: OutgoingHttpHeaders;
  #headers: OutgoingHttpHeaders | undefined;

  constructor(res: ServerResponse, extra: OutgoingHttpHeaders, body: Buffer | undefined) {
    this.status = res.statusCode;
    this.body = body;
    this.#res = res;
    this.#extra = extra;
  }

  get headers(): OutgoingHttpHeaders {
    if (this.#headers === undefined) {
      const all = this.#res.getHeaders(); // a fresh copy
      for (const name of Object.keys(this.#extra)) all[name] = this.#extra[name];
      this.#headers = all;
    }
    return this.#headers;
  }

  [HEADER_OF](name: string): OutgoingHttpHeaders[string] {
    return Object.hasOwn(this.#extra, name) ? this.#extra[name] : this.#res.getHeader(name);
  }
}

function toBuffer(chunk: unknown, encoding: unknown): Buffer | undefined {
  if (chunk === undefined || chunk === null || typeof chunk === "function") return undefined;
  if (typeof chunk === "string") {
    return Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
  }
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

/**
 * Records what the handler sends, however it sends it: `res.json`/`res.send` (which end in
 * `res.end`), `res.write` + `res.end`, a piped stream (which calls `write` and `end`), and
 * headers given straight to `res.writeHead`. Every call still goes through to the real response
 * unchanged; the copy stops (and `body` becomes `undefined`) past `maxBytes`. `onEnd` runs once,
 * when the handler ends the response, even if the client has gone away by then.
 *
 * @example
 * captureResponse(res, 1_048_576, ({ status, headers, body }) => save(status, headers, body));
 * @see https://nodejs.org/api/http.html#class-httpserverresponse
 */
export function captureResponse(
  res: ServerResponse,
  maxBytes: number,
  onEnd: (captured: CapturedResponse) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let oversized = false;
  let ended = false;
  const extraHeaders: OutgoingHttpHeaders = {};

  const keep = (chunk: unknown, encoding: unknown): void => {
    if (oversized) return;
    const buf = toBuffer(chunk, encoding);
    if (!buf || buf.byteLength === 0) return;
    size += buf.byteLength;
    if (size > maxBytes) {
      oversized = true;
      chunks.length = 0;
      return;
    }
    // Copy: a streaming source may reuse its buffer after write() returns.
    chunks.push(Buffer.from(buf));
  };

  const originalWriteHead = res.writeHead;
  const originalWrite = res.write;
  const originalEnd = res.end;

  res.writeHead = function writeHead(this: ServerResponse, ...args: unknown[]) {
    const last = args[args.length - 1];
    if (last && typeof last === "object") {
      if (Array.isArray(last)) {
        // [name, value, name, value, ...] (raw header pairs)
        for (let i = 0; i + 1 < last.length; i += 2) {
          extraHeaders[String(last[i]).toLowerCase()] = String(last[i + 1]);
        }
      } else {
        for (const [name, value] of Object.entries(last as OutgoingHttpHeaders)) {
          if (value !== undefined) extraHeaders[name.toLowerCase()] = value;
        }
      }
    }
    return (originalWriteHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse["writeHead"];

  // The arguments go through exactly as given: other wrappers (compression) look at their count.
  res.write = function write(this: ServerResponse, ...args: unknown[]) {
    if (!ended) keep(args[0], args[1]);
    return (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
  } as ServerResponse["write"];

  res.end = function end(this: ServerResponse, ...args: unknown[]) {
    const first = !ended;
    if (first) {
      ended = true;
      keep(args[0], args[1]);
    }
    const result = (originalEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
    if (first) {
      onEnd(new Captured(res, extraHeaders, oversized ? undefined : Buffer.concat(chunks, size)));
    }
    return result;
  } as ServerResponse["end"];
}
