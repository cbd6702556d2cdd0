import type { OutgoingHttpHeaders, ServerResponse } from "node:http";

/**
 * What a handler sent, as seen by {@link captureResponse}.
 *
 * @example const { status, body } = captured; // body is undefined when it outgrew the cap
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15
 */
export interface CapturedResponse {
  status: number;
  /**
   * Every response header, lower-case names; `content-encoding` is the coding of `body` (absent
   * when the bytes were captured before a wrapper mounted ahead of the capture encoded them).
   */
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
  readonly #coding: OutgoingHttpHeaders[string];
  #headers: OutgoingHttpHeaders | undefined;

  constructor(
    res: ServerResponse,
    extra: OutgoingHttpHeaders,
    body: Buffer | undefined,
    coding: OutgoingHttpHeaders[string],
  ) {
    this.status = res.statusCode;
    this.body = body;
    this.#res = res;
    this.#extra = extra;
    this.#coding = coding;
  }

  get headers(): OutgoingHttpHeaders {
    if (this.#headers === undefined) {
      const all: OutgoingHttpHeaders = this.#res.getHeaders(); // a fresh copy
      for (const name of Object.keys(this.#extra)) all[name] = this.#extra[name];
      // The coding of `body`, not the one a wrapper before the capture applied after it.
      const coding: string = "content-encoding";
      if (this.#coding === undefined) delete all[coding];
      else all[coding] = this.#coding;
      this.#headers = all;
    }
    return this.#headers;
  }

  [HEADER_OF](name: string): OutgoingHttpHeaders[string] {
    if (name === "content-encoding") return this.#coding;
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

type Write = (this: ServerResponse, ...args: unknown[]) => boolean;
type WriteHead = (this: ServerResponse, ...args: unknown[]) => ServerResponse;
type End = (this: ServerResponse, ...args: unknown[]) => ServerResponse;

/**
 * The copy {@link captureResponse} keeps of one response while the handler sends it (TypeScript
 * `private`, not `#`, members: they are read on every write, and `#` costs more on Node 20).
 */
class Recording {
  private readonly maxBytes: number;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private oversized = false;
  /** Headers given straight to `res.writeHead`, lower-case names. */
  private readonly extraHeaders: OutgoingHttpHeaders = {};
  /** Set by the handler's first `end`: what comes after is not part of its response. */
  ended = false;
  /** Whether {@link Recording.coding} has been read. */
  private codingSeen = false;
  /** The `Content-Encoding` the response had when its header section or body reached the capture. */
  private coding: OutgoingHttpHeaders[string] = undefined;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Copies a body chunk, until the body grows past the cap (then drops the copy for good). */
  keep(chunk: unknown, encoding: unknown): void {
    if (this.oversized) return;
    const buf = toBuffer(chunk, encoding);
    if (!buf || buf.byteLength === 0) return;
    this.size += buf.byteLength;
    if (this.size > this.maxBytes) {
      this.oversized = true;
      this.chunks.length = 0;
      return;
    }
    // Copy: a streaming source may reuse its buffer after write() returns.
    this.chunks.push(Buffer.from(buf));
  }

  /**
   * Reads the `Content-Encoding` as the header section passes through the capture (every
   * `write`/`end` sends it through `res.writeHead` first): the coding of the bytes it sees.
   * RFC 9110 §8.4: the field names the codings "applied to the representation", which a
   * recipient must undo. A wrapper mounted after the middleware (compression on the route) wraps
   * `writeHead` outside this one and has set the field by then, and encodes before the bytes
   * arrive here; one mounted before it sets the field inside, after this read, and encodes the
   * bytes after they were kept, so the field is not theirs.
   */
  seeCoding(res: ServerResponse): void {
    if (this.codingSeen) return;
    this.codingSeen = true;
    this.coding = this.extraHeaders["content-encoding"] ?? res.getHeader("content-encoding");
  }

  /** The headers argument of `res.writeHead`, its last: an object, or raw name/value pairs. */
  keepHeaders(args: unknown[]): void {
    const last = args[args.length - 1];
    if (!last || typeof last !== "object") return;
    if (Array.isArray(last)) {
      // [name, value, name, value, ...] (raw header pairs)
      for (let i = 0; i + 1 < last.length; i += 2) {
        this.extraHeaders[String(last[i]).toLowerCase()] = String(last[i + 1]);
      }
      return;
    }
    for (const [name, value] of Object.entries(last as OutgoingHttpHeaders)) {
      if (value !== undefined) this.extraHeaders[name.toLowerCase()] = value;
    }
  }

  /** What the handler sent, once it has ended the response. */
  captured(res: ServerResponse): CapturedResponse {
    this.seeCoding(res);
    return new Captured(
      res,
      this.extraHeaders,
      this.oversized ? undefined : Buffer.concat(this.chunks, this.size),
      this.coding,
    );
  }
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
  capture(res, maxBytes, onEnd, false);
}

/**
 * {@link captureResponse} for the middleware: the bytes of the response's end (its last chunk,
 * and the header section when nothing was written before) wait until `onEnd`'s promise settles,
 * so the record is stored (or released) before the client can read the whole response.
 * draft-ietf-httpapi-idempotency-key-header §2.6: a retry gets "the result of the previously
 * completed operation"; sent first, a client that retries (or, after a 400 not stored, corrects
 * its body and retries) as soon as it has the response would meet the record still in flight: a
 * 409, or a 422 for the corrected body. The end itself runs at once, through every wrapper inside
 * this one (an ETag, a content coding), so the response is started and ended as without the
 * hold, and the record holds the headers sent. The bytes wait at the connection, in its public
 * `write` and `end`, which every byte of a response goes through on any Node.js release (no
 * private member of `ServerResponse` is relied on); a response without a connection whose `write`
 * can be held has its end itself wait instead. Bytes a handler wrote before `end` are not held:
 * with a `Content-Length` of its own and the whole body in `write` calls, the client may still
 * finish reading before the record is stored.
 */
export function captureResponseHeld(
  res: ServerResponse,
  maxBytes: number,
  onEnd: (captured: CapturedResponse) => Promise<void>,
): void {
  capture(res, maxBytes, onEnd, true);
}

type ConnectionOp = (this: unknown, ...args: unknown[]) => unknown;

/** The connection's own `write` and `end`, replaced while a response's end is held. */
interface ConnectionHold {
  /** Responses holding the connection (more than one when requests are pipelined on it). */
  holders: number;
  readonly queue: Array<[ConnectionOp, unknown[]]>;
  readonly write: ConnectionOp;
  readonly end: ConnectionOp;
  readonly heldWrite: ConnectionOp;
  readonly heldEnd: ConnectionOp;
}

type Connection = { write?: unknown; end?: unknown; destroyed?: boolean; cork?(): void; uncork?(): void };

const HOLDS = new WeakMap<object, ConnectionHold>();

/** Puts back the connection's `write` and `end`, where they are still the holding ones. */
function restore(conn: Connection, hold: ConnectionHold): void {
  try {
    if (conn.write === hold.heldWrite) conn.write = hold.write;
    if (conn.end === hold.heldEnd) conn.end = hold.end;
  } catch {
    // Not writable after all: the held functions pass everything through once released.
  }
}

/** Holds the connection's `write` and `end` for its first holder; `undefined` where they cannot be. */
function holdConnection(conn: Connection): ConnectionHold | undefined {
  let write: unknown;
  let end: unknown;
  try {
    ({ write, end } = conn);
  } catch {
    return undefined; // an HTTP/2 compatibility response's socket proxy refuses to be written
  }
  if (typeof write !== "function" || typeof end !== "function") return undefined;
  const queue: Array<[ConnectionOp, unknown[]]> = [];
  const hold: ConnectionHold = {
    holders: 0,
    queue,
    write: write as ConnectionOp,
    end: end as ConnectionOp,
    heldWrite(this: unknown, ...args: unknown[]) {
      if (hold.holders === 0) return hold.write.apply(this, args);
      queue.push([hold.write, args]);
      return true; // as a write the stream takes in: no backpressure for the bytes of an end
    },
    heldEnd(this: unknown, ...args: unknown[]) {
      if (hold.holders === 0) return hold.end.apply(this, args);
      queue.push([hold.end, args]);
      return this;
    },
  };
  try {
    conn.write = hold.heldWrite;
    conn.end = hold.heldEnd;
  } catch {
    // A read-only property (a frozen or proxied socket): nothing to hold it with.
  }
  if (conn.write !== hold.heldWrite || conn.end !== hold.heldEnd) {
    restore(conn, hold);
    return undefined;
  }
  return hold;
}

/**
 * Holds what a response hands to its connection until `release()`. The connection is a stream
 * the HTTP server may only write through its public `write` and `end`: `http.Server` takes any
 * Duplex stream as a connection (`server.emit("connection", duplex)`), so every byte a
 * `ServerResponse` sends (header section and body, from `write`, `end`, a coder's later output,
 * a pipelined response's buffered bytes when the connection comes to it) arrives there, whatever
 * Node.js does inside the response (its private `_send`/`_writeRaw` differ between releases).
 * The calls queue here in order and go out as they would have, callbacks (and so `finish`)
 * included, batched by `cork()`. Responses pipelined on one connection share one hold, released
 * with the last of them. A connection destroyed meanwhile gets nothing (as a response drops what
 * it writes to a destroyed socket). `undefined` when the response has no connection whose
 * `write` and `end` can be held.
 */
function holdBytes(res: ServerResponse): { release(): void } | undefined {
  const conn = (res.socket ?? (res as { req?: { socket?: unknown } }).req?.socket) as
    | Connection
    | null
    | undefined;
  if (!conn || typeof conn !== "object") return undefined;
  let hold = HOLDS.get(conn);
  if (hold === undefined) {
    hold = holdConnection(conn);
    if (hold === undefined) return undefined;
    HOLDS.set(conn, hold);
  }
  const held = hold;
  held.holders++;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      held.holders--;
      if (held.holders > 0) return;
      HOLDS.delete(conn);
      restore(conn, held);
      const pending = held.queue.splice(0);
      if (conn.destroyed === true || pending.length === 0) return;
      conn.cork?.();
      for (const [op, args] of pending) op.apply(conn, args);
      conn.uncork?.();
    },
  };
}

function capture(
  res: ServerResponse,
  maxBytes: number,
  onEnd: (captured: CapturedResponse) => void | Promise<void>,
  hold: boolean,
): void {
  const recording = new Recording(maxBytes);
  const originalWriteHead = res.writeHead as WriteHead;
  const originalWrite = res.write as Write;
  const originalEnd = res.end as End;
  /** Set when the end itself waits for the record (no connection to hold): what comes after queues. */
  let deferred: Promise<void> | undefined;
  /** A queued call running: what it calls itself (an end that writes its chunk) goes straight on. */
  let replaying = false;
  const waiting = () => deferred !== undefined && !replaying;
  const later = (self: ServerResponse, run: () => unknown) => {
    deferred = (deferred as Promise<void>)
      .then(() => {
        replaying = true;
        try {
          run();
        } finally {
          replaying = false;
        }
      })
      .catch((err: unknown) => {
        self.destroy(err instanceof Error ? err : new Error(String(err)));
      });
  };

  res.writeHead = function writeHead(this: ServerResponse, ...args: unknown[]) {
    recording.keepHeaders(args);
    recording.seeCoding(this);
    return originalWriteHead.apply(this, args);
  } as ServerResponse["writeHead"];

  // The arguments go through exactly as given: other wrappers (compression) look at their count.
  res.write = function write(this: ServerResponse, ...args: unknown[]) {
    if (waiting()) {
      later(this, () => originalWrite.apply(this, args));
      return true;
    }
    if (!recording.ended) recording.keep(args[0], args[1]);
    return originalWrite.apply(this, args);
  } as ServerResponse["write"];

  res.end = function end(this: ServerResponse, ...args: unknown[]) {
    if (waiting()) {
      later(this, () => originalEnd.apply(this, args));
      return this;
    }
    if (recording.ended) return originalEnd.apply(this, args);
    // An end that throws (node:http refuses the status code of res.status(undefined) on Express 4
    // when it writes the header section) has ended nothing: Express answers the error with a
    // response of its own, and that one is the response to record. Recorded as ended here, its
    // claim would never be settled, and every retry would get 409 "still being processed"
    // (draft-ietf-httpapi-idempotency-key-header §2.7) until maxLeaseMs for a request long done.
    recording.ended = true;
    // Held: the end runs now, through every wrapper inside this one (conditional's ETag, a content
    // coding) as it would without the hold, so the record holds the headers sent; only the bytes
    // it hands to the connection (through the connection's public write and end, which every byte
    // of a response goes through on any Node.js: see holdBytes) wait until the record is settled,
    // in the order they came.
    const bytes = hold ? holdBytes(this) : undefined;
    if (hold && bytes === undefined && validStatus(this.statusCode)) {
      // No connection to hold (an HTTP/2 compatibility response, a socket whose write is
      // read-only): the end itself waits for the record, through the response's public API, so
      // the guarantee stands; the record then lacks what wrappers inside this one add in their
      // end (an ETag of the body), which the response itself still carries.
      recording.keep(args[0], args[1]);
      deferred = Promise.resolve(onEnd(recording.captured(res))).then(
        () => {},
        () => {},
      );
      later(this, () => originalEnd.apply(this, args));
      return this;
    }
    let result: ServerResponse;
    try {
      result = originalEnd.apply(this, args);
    } catch (err) {
      bytes?.release();
      recording.ended = false;
      throw err;
    }
    recording.keep(args[0], args[1]);
    const settled = onEnd(recording.captured(res));
    if (bytes !== undefined) {
      void Promise.resolve(settled)
        .catch(() => {})
        .then(() => bytes.release());
    }
    return result;
  } as ServerResponse["end"];
}

/** A status code node:http sends (RFC 9110 §15: three digits); any other makes its end throw. */
function validStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 100 && status <= 999;
}
