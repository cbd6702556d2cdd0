import { refusedOption } from "./option-error.js";
import { listed } from "./vary.js";

/** A response field's value: one field line, or several (`Set-Cookie`, RFC 9110 §5.3). */
export type FieldValue = string | readonly string[];

/**
 * Response fields by lower-case name. `null` removes a field that something in front of the
 * pipeline set (a 304 drops the `Content-Type` of the 200 it replaces, RFC 9110 §15.4.5).
 */
export type Fields = Record<string, FieldValue | null>;

/** What a response carries as content: whole bytes, or a stream of them. */
export type Body = Uint8Array | NodeJS.ReadableStream;

/**
 * A response as a value: what the pipeline makes of a handler's result, step by step, before one
 * write puts it on the wire. Its fields are the ones the pipeline sets or removes; fields set by
 * middleware in front (security headers, CORS, rate-limit usage) stay where they were set, and
 * `vary` is appended to any `Vary` already there, a `link` field to any `Link`.
 */
export interface ResponseValue {
  /** A final status, 200..599. */
  status: number;
  /** Fields to set (or, `null`, to remove), by lower-case name. */
  fields: Fields;
  /** The request fields this response was chosen by (RFC 9110 §12.5.5), in order, without repeats. */
  vary: string[];
  /** The content: identity bytes until the coding step, then the coded ones. */
  body: Body | undefined;
}

/** A field value as one string: several lines joined with `, ` (RFC 9110 §5.3). */
export function fieldText(value: FieldValue | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === "string" ? value : value.join(", ");
}

/** Appends `names` to `vary`, each once, compared case-insensitively (RFC 9110 §12.5.5). */
export function addVary(vary: string[], ...names: readonly string[]): void {
  addVaryNames(vary, names);
}

/** {@link addVary} of a list, without a copy of it or of any name. @internal */
export function addVaryNames(vary: string[], names: readonly string[]): void {
  for (const name of names) if (!listed(vary, name)) vary.push(name);
}

/** What a handler may choose about a response it returns data for. */
export interface ReplyInit {
  /**
   * The status: a final status code, 200..599 (RFC 9110 §15). Anything else is a `TypeError`
   * with code `ERR_SVC_KERNEL_STATUS`, at the `reply()` call.
   * @default 200
   */
  status?: number;
  /** Response fields of this reply (`Location`, `Cache-Control`, `Content-Disposition`, ...). */
  headers?: Readonly<Record<string, FieldValue>>;
  /**
   * When the resource last changed: sent as `Last-Modified` (never later than the response's
   * `Date`, RFC 9110 §8.8.2.1) and compared with `If-Modified-Since` / `If-Unmodified-Since`.
   */
  lastModified?: Date;
  /** Keeps only these media types of the pipeline's representations for this reply. */
  only?: readonly string[];
  /** Extra representations of this reply, after the pipeline's in server preference. */
  add?: readonly Representation[];
  /** Replaces the pipeline's representations for this reply. */
  representations?: readonly Representation[];
}

/** What a serializer learns about the representation it is producing. */
export interface RepresentContext {
  /** The media type being sent, without parameters (may be a vendor `+json` type). */
  mediaType: string;
  /** The language chosen from `Accept-Language`, when the pipeline offers languages. */
  language?: string | undefined;
}

/** What a serializer may return: text (sent as UTF-8), bytes, a stream, or a promise of one. */
export type RepresentationBody = string | Uint8Array | NodeJS.ReadableStream;

/**
 * A media type and how to turn data into it. A plain object literal is enough.
 *
 * @example
 * const hal: Representation = { mediaType: "application/hal+json", serialize: (d) => JSON.stringify(d) };
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-3.2
 */
export interface Representation {
  /** The media type offered, e.g. `application/json` (parameters allowed, `charset` added for text). */
  mediaType: string;
  /** Produces the body. */
  serialize(data: unknown, context: RepresentContext): RepresentationBody | Promise<RepresentationBody>;
  /**
   * Whether this representation can express `data` at all (CSV needs a collection); one that
   * cannot is left out of the negotiation for that response.
   * @default () => true
   */
  canRepresent?(data: unknown): boolean;
  /**
   * Response fields of this representation only, set when it is the one chosen (a PDF's
   * `Content-Disposition`, RFC 6266 §4.2, which its JSON alternative must not carry).
   * @default none
   */
  fields?(data: unknown): Readonly<Record<string, string>>;
}

const NO_FIELDS: Readonly<Record<string, FieldValue>> = Object.freeze({});

/**
 * A handler's answer: data for the pipeline to represent (`reply(data)`), content already in its
 * final form (`reply.bytes`), or none (`reply.empty`). Build one with {@link reply}; a handler may
 * also return the data itself, which is `reply(data)`.
 */
export class Reply {
  /** The status, 200..599. */
  readonly status: number;
  /** The reply's own fields, as given. */
  readonly headers: Readonly<Record<string, FieldValue>>;
  /** The data to represent, when {@link kind} is `"data"`. */
  readonly data: unknown;
  /** The content as given, when {@link kind} is `"bytes"`. */
  readonly body: RepresentationBody | undefined;
  /** What the reply carries: data to represent, content as it is, or nothing. */
  readonly kind: "data" | "bytes" | "empty";
  readonly lastModified: Date | undefined;
  readonly only: readonly string[] | undefined;
  readonly add: readonly Representation[] | undefined;
  readonly representations: readonly Representation[] | undefined;

  private constructor(
    kind: Reply["kind"],
    data: unknown,
    body: RepresentationBody | undefined,
    init: ReplyInit,
  ) {
    this.kind = kind;
    this.data = data;
    this.body = body;
    this.status = checkedStatus(init.status ?? (kind === "empty" ? 204 : 200));
    this.headers = init.headers ?? NO_FIELDS;
    this.lastModified = init.lastModified;
    this.only = init.only;
    this.add = init.add;
    this.representations = init.representations;
  }

  /** @internal use {@link reply} */
  static of(
    kind: Reply["kind"],
    data: unknown,
    body: RepresentationBody | undefined,
    init: ReplyInit,
  ): Reply {
    return new Reply(kind, data, body, init);
  }
}

/**
 * `status` checked: a final status, 200..599 (RFC 9110 §15). A 1xx is interim ("terminated by the
 * end of the header section", §15.2), so a client would wait for a final response that never
 * comes; Node refuses anything outside 100..999 only once the response is half-written.
 */
function checkedStatus(status: unknown): number {
  if (typeof status !== "number" || !Number.isInteger(status) || status < 200 || status > 599) {
    throw refusedOption("kernel", "status", status, "a final status code, a whole number from 200 to 599");
  }
  return status;
}

/**
 * The data of a response, for the pipeline to represent as the client prefers (RFC 9110 §12.1):
 * serialised once, tagged, checked against the request's preconditions, coded, and written.
 *
 * @example
 * app.post("/orders", svc.handle(async (req) => {
 *   const order = await orders.create(req.body);
 *   return reply(order, { status: 201, headers: { Location: `/orders/${order.id}` } });
 * }));
 */
export function reply(data: unknown, init: ReplyInit = {}): Reply {
  return Reply.of("data", data, undefined, init);
}

/**
 * Content already in its final form, of one media type (a PDF, an image, a page rendered
 * elsewhere): tagged, checked, coded and written like represented data, never negotiated.
 *
 * @example return reply.bytes(png, "image/png", { headers: { "Cache-Control": "max-age=3600" } });
 */
reply.bytes = function bytes(body: RepresentationBody, contentType: string, init: ReplyInit = {}): Reply {
  if (typeof contentType !== "string" || contentType.trim() === "") {
    throw refusedOption("kernel", "contentType", contentType, "a media type, such as image/png");
  }
  return Reply.of("bytes", undefined, body, {
    ...init,
    headers: { ...init.headers, "content-type": contentType },
  });
};

/**
 * A response without content: 204 unless `init.status` says otherwise (a 202 whose work goes on
 * elsewhere, a 201 whose `Location` says it all).
 *
 * @example return reply.empty(); // 204
 */
reply.empty = function empty(init: ReplyInit = {}): Reply {
  return Reply.of("empty", undefined, undefined, init);
};

/** Whether `value` is a {@link Reply}. */
export function isReply(value: unknown): value is Reply {
  return value instanceof Reply;
}
