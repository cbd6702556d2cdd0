import { promisify } from "node:util";
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from "node:zlib";
import { parseQList } from "@svc/errors";

/**
 * The content codings a `Content-Encoding` value names, in the order they were applied
 * (RFC 9110 §8.4: "listed in the order in which they were applied"), lower-case, without
 * `identity` (which changes nothing).
 *
 * @example codingsOf("gzip") // ["gzip"]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.4
 */
export function codingsOf(contentEncoding: string | readonly string[]): string[] {
  const value = typeof contentEncoding === "string" ? contentEncoding : contentEncoding.join(",");
  return value
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
}

/**
 * Whether a response in `codings` may be sent as it is to a request with this `Accept-Encoding`:
 * each coding must be acceptable and preferred to `identity` (ties go to the coding, as
 * compression middleware decides). RFC 9110 §12.5.3: a coding with `q=0`, or left out of a list
 * (`*;q=0`), is "not acceptable"; and a request without the field "does not imply that the user
 * agent will be able to correctly process all encodings", so, as the compression middleware that
 * produced the record would have done for this request, it gets identity.
 *
 * Each name takes the weight of its own member, else of `*`. A coding listed with a weight above 0
 * is preferred to an `identity` the field does not name (by itself or by `*`), which is acceptable
 * but no more than anything listed (§12.5.3: "unless specifically excluded"). Otherwise a tie goes
 * to the name matched by its own member over one matched by `*`, then to the member listed first,
 * then to the coding: the reading of the compression middleware (jshttp's negotiator), which a
 * differential test holds this to.
 *
 * @example sendsCoded("gzip, br", ["gzip"]) // true
 * @example sendsCoded("identity", ["gzip"]) // false
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.3
 */
export function sendsCoded(acceptEncoding: string | undefined, codings: readonly string[]): boolean {
  if (codings.length === 0) return true;
  const members = acceptEncoding === undefined ? [] : parseQList(acceptEncoding);
  if (members.length === 0) return false;
  const identity = weightOf(members, "identity");
  return codings.every((coding) => {
    const c = weightOf(members, coding);
    if (c === undefined || c.q === 0) return false;
    if (identity === undefined) return true;
    if (c.q !== identity.q) return c.q > identity.q;
    if (c.exact !== identity.exact) return c.exact;
    return c.at <= identity.at;
  });
}

interface Weight {
  q: number;
  /** Matched by a member naming it, not by `*`. */
  exact: boolean;
  /** The position of that member in the field. */
  at: number;
}

/** The weight `name` takes in the field: its own member's (the highest, the last of equals), else `*`'s. */
function weightOf(members: readonly { value: string; q: number }[], name: string): Weight | undefined {
  let best: Weight | undefined;
  members.forEach((m, at) => {
    const exact = m.value === name;
    if (!exact && m.value !== "*") return;
    if (best === undefined || (exact && !best.exact) || (exact === best.exact && m.q >= best.q))
      best = { q: m.q, exact, at };
  });
  return best;
}

type Decode = (buf: Uint8Array, options: ZlibOptions) => Promise<Buffer>;

/** The codings node:zlib undoes (RFC 9110 §8.4.1; `x-gzip` is `gzip`, §8.4.1.3). */
const DECODERS: Readonly<Record<string, Decode>> = {
  gzip: promisify(gunzip) as Decode,
  "x-gzip": promisify(gunzip) as Decode,
  deflate: promisify(inflate) as Decode,
  br: promisify(brotliDecompress) as Decode,
};

/** Why {@link decodeContent} could not produce the identity bytes. */
export class ContentDecodeError extends Error {
  /** `unsupported`: no decoder for a coding; `too-large`: past the cap; `corrupt`: the bytes do not decode. */
  readonly reason: "unsupported" | "too-large" | "corrupt";

  constructor(reason: ContentDecodeError["reason"], message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ContentDecodeError";
    this.reason = reason;
  }
}

/**
 * Undoes `codings` (last applied first) with node:zlib, never producing more than `maxBytes`
 * at any step. Rejects with a {@link ContentDecodeError}.
 *
 * @example await decodeContent(gzipSync("hi"), ["gzip"], 1024) // <Buffer 68 69>
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.4.1
 */
export async function decodeContent(
  body: Uint8Array,
  codings: readonly string[],
  maxBytes: number,
): Promise<Uint8Array> {
  for (const coding of codings) {
    if (!Object.hasOwn(DECODERS, coding)) {
      throw new ContentDecodeError("unsupported", `no decoder for the content coding "${coding}"`);
    }
  }
  let bytes = body;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i] as string;
    const decode = DECODERS[coding] as Decode;
    try {
      // maxOutputLength: zlib stops (RangeError) instead of inflating a bomb into memory.
      bytes = await decode(bytes, { maxOutputLength: Math.max(1, maxBytes) });
    } catch (err) {
      if ((err as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") {
        throw new ContentDecodeError(
          "too-large",
          `the ${coding}-decoded body exceeds ${maxBytes} bytes`,
          err,
        );
      }
      throw new ContentDecodeError("corrupt", `the stored body does not decode as ${coding}`, err);
    }
    if (bytes.byteLength > maxBytes) {
      throw new ContentDecodeError("too-large", `the ${coding}-decoded body exceeds ${maxBytes} bytes`);
    }
  }
  return bytes;
}
