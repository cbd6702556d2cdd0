import {
  type CurrentState,
  type FieldValue,
  fieldText,
  HttpError,
  type PipelineRequest,
  type PreconditionOutcome,
  parseMediaType,
  type ResponseValue,
  trimOws,
  type Validators,
} from "@svc/kernel";
import {
  BoundedMemo,
  BoundedPairMemo,
  checkOptionType,
  digest,
  emitWarning,
  refusedOption,
  requireOptionType,
  utf8Bytes,
} from "@svc/kernel/internal";
import {
  decidePreconditions,
  guardsWrite,
  isConditional,
  preconditionFailed,
  reportDecided,
} from "./core.js";
import { conditionalChannel, publishConditional } from "./diagnostics.js";
import { isEntityTag, listMatches, parseEtagList } from "./entity-tag.js";
import { parseHttpDate, withDateLists } from "./http-date.js";
import { resolveValidatorsConfig, type ValidatorsOptions } from "./options.js";

/**
 * The label a representation's tag is computed under: the media type's `type/subtype` and its
 * parameters (names lower-cased, sorted), without `charset`, and the language. `charset` is left
 * out because the bytes carry it (RFC 9110 §8.3.2: it tells how the bytes decode, and two labels
 * of one byte sequence are one text wherever both decode it), so `application/json` and
 * `application/json; charset=utf-8` of the same bytes share a tag, and `current` can name a type
 * as `res.represent` offers it. A value that is no media type is taken as it is, lower-cased.
 */
function representationLabel(contentType: string, language: string | undefined): string {
  const parsed = parseMediaType(contentType);
  let type = contentType.trim().toLowerCase();
  if (parsed !== undefined) {
    const parameters = parsed.parameters
      .filter(([name]) => name !== "charset")
      .map(([name, value]) => `;${name}=${value}`)
      .sort();
    type = `${parsed.type}/${parsed.subtype}${parameters.join("")}`;
  }
  return `${type}\n${(language ?? "").toLowerCase()}\n`;
}

/** A representation's label as UTF-8 bytes. */
function labelBytes(contentType: string, language: string | undefined): Uint8Array {
  return utf8Bytes(representationLabel(contentType, language));
}

/**
 * The labels' UTF-8 bytes by content type, and by content type and language: a server sends a
 * handful of types (its representations', the vendor labels of its versions), each response tagged
 * under one, so the label is parsed and encoded once per value instead of on every response. No
 * language (the common case) is one lookup by the type itself. Bounded: at most 64 labels without a
 * language and 64 with one, each type and language of at most 256 characters (a longer one is
 * labelled afresh each time and never held), so at most some 200 KB; a 65th of either kind clears
 * that kind.
 */
const labels = new BoundedMemo((contentType) => labelBytes(contentType, undefined), {
  limit: 64,
  maxKeyLength: 256,
});
const labelsByLanguage = new BoundedPairMemo(labelBytes, { limit: 64, maxKeyLength: 256 });

/** How many labels {@link representationTag} holds now, for tests of its bound. @internal */
export function labelCacheSize(): number {
  return labels.size + labelsByLanguage.size;
}

/**
 * A strong entity tag for one representation: its identity bytes, labelled by its media type and
 * language. RFC 9110 §8.8.3: "a strong validator is unique across all versions of all
 * representations associated with a particular resource over time", so `application/json`,
 * `application/hal+json` and `application/vnd.x.v1+json` of the same bytes are three
 * representations with three tags, and a tag a client holds for one never revalidates another.
 * The format is the `etag` package's (the byte length in hex, then 27 characters of a SHA-1 in
 * base64), over the bytes preceded by the media type (without `charset`, which the bytes carry)
 * and the language. It is the packages' one strong-tag formula: `validators()` tags every
 * response this way, the SOAP endpoint its WSDL and XSD documents, and a `current` for writes (or
 * for `preconditions()` on a route outside the pipeline, whose 200 sets this tag) computes the
 * same tag for the representation it names, so the tag a client holds is the one compared.
 *
 * Anything but a string or bytes as `body` (a number, `undefined`, an object to serialise first)
 * is refused with a `TypeError` of code `ERR_SVC_CONDITIONAL_BODY`: a tag is computed from the
 * exact bytes sent (RFC 9110 §8.8.3), and there are none to hash. A `contentType` that is not a
 * string is refused with `ERR_SVC_CONDITIONAL_CONTENT_TYPE`, a `language` neither a string nor
 * `undefined` with `ERR_SVC_CONDITIONAL_LANGUAGE`: the label is part of what the tag identifies.
 *
 * @example representationTag("application/json", undefined, Buffer.from('{"id":42}'))
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3
 */
export function representationTag(
  contentType: string,
  language: string | undefined,
  body: string | Uint8Array,
): string {
  // @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3 — the tag is unique per
  //   representation, so what labels it is checked as strictly as its bytes.
  requireOptionType(
    "conditional",
    "contentType",
    contentType,
    "string",
    'a string: the media type the representation is sent as ("application/json")',
    "representationTag: contentType",
  );
  checkOptionType(
    "conditional",
    "language",
    language,
    "string",
    'a string or undefined: the Content-Language of the representation ("en"), undefined for none',
    "representationTag: language",
  );
  if (typeof body !== "string" && !ArrayBuffer.isView(body))
    throw refusedOption(
      "conditional",
      "body",
      body,
      "a string or bytes (a Buffer or Uint8Array): the representation as sent",
      "representationTag: body",
    );
  const bytes =
    typeof body === "string"
      ? utf8Bytes(body)
      : body instanceof Uint8Array
        ? body
        : new Uint8Array(
            (body as ArrayBufferView).buffer,
            (body as ArrayBufferView).byteOffset,
            (body as ArrayBufferView).byteLength,
          );
  const label =
    language === undefined ? labels.get(contentType) : labelsByLanguage.get(contentType, language);
  const length = label.byteLength + bytes.byteLength;
  // The hash is taken at once, so one buffer serves every small representation: a typed array
  // made per response allocates its bytes outside the heap, which costs more than the copy.
  const labelled =
    length <= SCRATCH_BYTES ? new Uint8Array(scratch.buffer, 0, length) : new Uint8Array(length);
  labelled.set(label, 0);
  labelled.set(bytes, label.byteLength);
  return `"${bytes.byteLength.toString(16)}-${digest("sha1", labelled, "base64").slice(0, 27)}"`;
}

/** The largest labelled representation hashed in {@link scratch}: 16 KiB, held for good. */
const SCRATCH_BYTES = 16 * 1024;
const scratch = new Uint8Array(SCRATCH_BYTES);

/** RFC 9110 §8.8.3: a strong tag of the identity bytes becomes weak on coded ones. */
function weak(tag: string): string {
  return tag.startsWith('"') ? `W/${tag}` : tag;
}

/** The Last-Modified of a response value, in seconds, or undefined. */
function lastModifiedOf(value: ResponseValue): Date | undefined {
  const text = fieldText(value.fields["last-modified"]);
  const seconds = text === undefined ? undefined : parseHttpDate(text);
  return seconds === undefined ? undefined : new Date(seconds * 1000);
}

/**
 * The default `Cache-Control` of a response: `private` added (and `public` dropped) when it sets
 * a cookie (RFC 9111 §7.3, §5.2.2.7); none when it has its own `Expires` (§4.2.1 computes its
 * lifetime from it), unless it sets a cookie (then `private` alone).
 */
function defaultCacheControl(
  cacheControl: string,
  setsCookie: boolean,
  expires: boolean,
): string | undefined {
  if (expires) return setsCookie ? "private" : undefined;
  if (!setsCookie) return cacheControl;
  const directives = cacheControl
    .split(",")
    .map((d) => d.trim())
    .filter((d) => d !== "");
  const names = directives.map((d) => (d.split("=")[0] as string).trim().toLowerCase());
  if (names.includes("private") || names.includes("no-store")) return cacheControl;
  return ["private", ...directives.filter((_d, i) => names[i] !== "public")].join(", ");
}

/** The warning, once per `validators()`, that a reply set an `ETag` that is no entity-tag. */
const INVALID_ETAG_WARNING_CODE = "SVC_CONDITIONAL_INVALID_ETAG";

/**
 * RFC 9110 §15.4.5: a 304 "SHOULD NOT generate representation metadata other than the above
 * listed fields" (Content-Location, Date, ETag, Vary, Cache-Control, Expires).
 */
const NOT_MODIFIED_DROP = [
  "content-type",
  "content-length",
  "content-language",
  "content-range",
  "transfer-encoding",
  "content-encoding",
];

/**
 * The pipeline's validators step (`createPipeline({ validators: validators() })` of
 * `@svc/kernel`): strong, per-representation ETags computed on the bytes the pipeline serialised
 * (weak when the response is content-coded, RFC 9110 §8.8.3), `Last-Modified` never later than
 * the response, the default cache policy, RFC 9110 §13.2.2 on GET/HEAD responses (304 with the
 * fields of §15.4.5, 412 with the current validators), and on writes, checked by the handler
 * (`preconditions(req, current)`), against the tag of the representation the client holds.
 *
 * @example
 * const svc = expressAdapter(createPipeline({ validators: validators({ defaultCacheControl: "no-cache" }) }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13
 */
export function validators(options: ValidatorsOptions = {}): Validators {
  const { defaultCacheControl: cacheControl, required, selectedOnly } = resolveValidatorsConfig(options);
  let warned = false;

  /** Whether the response carries `own` (a field of the value), or else its `name` set in front. */
  const carries = (request: PipelineRequest, own: FieldValue | null | undefined, name: string): boolean =>
    own === undefined ? request.preset?.(name) !== undefined : own !== null;

  /**
   * A reply's own `ETag`: kept (weak when the bytes are coded), or, when it is no entity-tag,
   * dropped with a warning once. RFC 9110 §5.5: a sender generates only values that match the
   * field's grammar; such a value matches no If-Match or If-None-Match.
   */
  const ownTag = (value: ResponseValue, coded: boolean): void => {
    const given = fieldText(value.fields.etag);
    if (given === undefined) return;
    if (isEntityTag(given)) {
      value.fields.etag = coded ? weak(trimOws(given)) : given;
      return;
    }
    value.fields.etag = null;
    if (warned) return;
    warned = true;
    emitWarning(
      `@svc/conditional: a reply set the ETag ${JSON.stringify(given.slice(0, 100))}, which is not an entity-tag (RFC 9110 §8.8.3: a quoted opaque-tag, "7" or W/"7"); it is not sent, and a response with bytes is tagged from them. Warned once.`,
      INVALID_ETAG_WARNING_CODE,
    );
  };

  /** The default `Cache-Control` of a GET/HEAD response that sets none (nor `Expires`). */
  const cachePolicy = (request: PipelineRequest, value: ResponseValue): void => {
    const method = request.view.method ?? "GET";
    const safe = method === "GET" || method === "HEAD";
    // Each field read by its own name: a keyed read of three names costs more on every response.
    const fields = value.fields;
    if (!safe || cacheControl === false || carries(request, fields["cache-control"], "cache-control")) return;
    const chosen = defaultCacheControl(
      cacheControl,
      carries(request, fields["set-cookie"], "set-cookie"),
      carries(request, fields.expires, "expires"),
    );
    if (chosen !== undefined) value.fields["cache-control"] = chosen;
  };

  return {
    validate(request, value, coding, lastModified) {
      // Bytes the reply coded itself (its own Content-Encoding) are coded too (RFC 9110 §8.8.3).
      const coded = coding !== "identity" || isCoded(fieldText(value.fields["content-encoding"]));
      ownTag(value, coded);
      const body = value.body;
      if (value.fields.etag == null && body !== undefined && body instanceof Uint8Array) {
        const type = fieldText(value.fields["content-type"]) ?? "application/octet-stream";
        const tag = representationTag(type, fieldText(value.fields["content-language"]), body);
        value.fields.etag = coded ? weak(tag) : tag;
      }
      if (lastModified !== undefined && !Number.isNaN(lastModified.getTime())) {
        // RFC 9110 §8.8.2.1: never later than the message's Date, which goes out with it (Node's
        // own Date comes from a per-second cache that may name an earlier second).
        const now = new Date();
        value.fields["last-modified"] = (lastModified > now ? now : lastModified).toUTCString();
        value.fields.date = now.toUTCString();
      }
      cachePolicy(request, value);
    },

    settle(request, value, coding) {
      const method = request.view.method ?? "GET";
      const safe = method === "GET" || method === "HEAD";
      // A 304 to a GET/HEAD says the tag its coded 200 would (weak); to another method it is the
      // reply's own mistake, its tag left as given (RFC 9110 §15.4.5).
      const coded = (coding !== "identity" || isCoded(fieldText(value.fields["content-encoding"]))) && safe;
      ownTag(value, coded);
      if (value.status !== 304) return;
      // A reply's own 304 is made as the pipeline's own (RFC 9110 §15.4.5): no representation
      // metadata, whatever the method (RFC 9112 §6.3: it has no content); to a GET or HEAD, the
      // default policy its 200 would carry.
      for (const name of NOT_MODIFIED_DROP) value.fields[name] = null;
      cachePolicy(request, value);
    },

    evaluate(request, value): PreconditionOutcome {
      if (!isConditional(request.view.headers)) return "proceed";
      const etag = fieldText(value.fields.etag);
      const decided = decidePreconditions(request.view.method ?? "GET", withDateLists(request.view), {
        etag: etag !== undefined && isEntityTag(etag) ? etag : undefined,
        lastModified: lastModifiedOf(value),
      });
      // The pipeline's view carries the framework's request as `native`.
      if (conditionalChannel.hasSubscribers) reportDecided(request.native, decided);
      return decided.outcome;
    },

    notModified(_request, value) {
      value.status = 304;
      for (const name of NOT_MODIFIED_DROP) value.fields[name] = null;
    },

    failed(value): HttpError {
      return preconditionFailed({ etag: fieldText(value.fields.etag), lastModified: lastModifiedOf(value) });
    },

    async beforeWrite(request, current: CurrentState | undefined, creates) {
      const method = request.view.method ?? "GET";
      const headers = withDateLists(request.view);
      if (required?.has(method) && !guardsWrite(headers)) {
        if (conditionalChannel.hasSubscribers)
          publishConditional(request.native, "precondition-required", undefined);
        throw HttpError.preconditionRequired(
          `${method} requires a conditional request: send If-Match with the current ETag`,
          { code: "precondition_required" },
        );
      }
      if (!isConditional(headers)) return;
      // RFC 9110 §13.2.1: preconditions are ignored when the response without them would not be
      // 2xx/412: a write to an absent resource it does not create answers 404.
      if (current === undefined && !creates) return;
      let etag: string | undefined;
      if (current !== undefined) {
        const named = headers["if-match"] ?? headers["if-none-match"];
        const list = named === undefined ? "*" : parseEtagList(named);
        // The variants come negotiated one first: with `writeMatch: "selected"`, only it counts.
        for await (const variant of current.variants) {
          if (variant.body instanceof Uint8Array) {
            const tag = representationTag(variant.contentType, variant.language, variant.body);
            etag ??= tag;
            if (list !== "*" && listMatches(list, tag, headers["if-match"] !== undefined)) {
              etag = tag;
              break;
            }
            if (list === "*") break;
          }
          if (selectedOnly) break;
        }
      }
      const validators = current === undefined ? undefined : { etag, lastModified: current.lastModified };
      const decided = decidePreconditions(method, headers, validators);
      if (conditionalChannel.hasSubscribers) reportDecided(request.native, decided);
      if (decided.outcome === 412) throw preconditionFailed(validators);
    },
  };
}

/** Whether a `Content-Encoding` names a coding other than identity (RFC 9110 §8.4). */
function isCoded(contentEncoding: string | undefined): boolean {
  const coding = contentEncoding?.trim().toLowerCase();
  return coding !== undefined && coding !== "" && coding !== "identity";
}
