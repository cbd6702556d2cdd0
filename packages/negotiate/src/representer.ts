import {
  type Choice,
  HttpError,
  type MediaTypeMatch,
  matchMediaType,
  type PipelineRequest,
  type Representation,
  type RepresentationBody,
  type Represented,
  type Representer,
} from "@svc/kernel";
import { BoundedMemo, BoundedPairMemo, checkOptionNames, utf8Bytes } from "@svc/kernel/internal";
import { negotiateChannel, publishNotAcceptable } from "./diagnostics.js";
import { essence, headerString } from "./headers.js";
import { selectLanguage } from "./language.js";
import { hintedLabel, mediaTypeHint } from "./media-type-hint.js";
import { refused, validateRepresentations } from "./options.js";
import { defaultRepresentations, isTextual } from "./representation.js";

/** Options of {@link representations}. */
export interface RepresentationsOptions {
  /**
   * The representations offered, in server preference (the first is the default).
   * @default [json, xml, csv, text, html]
   */
  offers?: readonly Representation[];
  /**
   * Languages offered (RFC 5646 tags), in server preference; the chosen one is sent as
   * `Content-Language` and given to the serializers.
   * @default [] (no language negotiation)
   */
  languages?: readonly string[];
}

// RFC 5646 §2.1, as a language-tag's shape: 1*8ALPHA *("-" 1*8alphanum).
const LANGUAGE_TAG = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/i;
const LANGUAGES = 'an array of language tags (RFC 5646), such as ["en", "de-CH"]';

/** The `Content-Type` of a chosen representation, with `charset=utf-8` for text (RFC 9110 §8.3). */
function contentTypeOf(offer: string, mediaType: string): string {
  const offerHasParams = mediaType === essence(offer) && offer.includes(";");
  const contentType = offerHasParams ? offer : mediaType;
  return isTextual(mediaType) && !/;\s*charset=/i.test(contentType)
    ? `${contentType}; charset=utf-8`
    : contentType;
}

/**
 * Content types by offer and media type: the server's own strings (its representations' types,
 * the vendor labels of its versions, a body's own `+json` type), the same few on every response.
 * Bounded all the same: at most 128 entries, keys of at most 256 characters (a longer one is
 * worked out each time and never held); past the bound it is cleared.
 */
const contentTypes = new BoundedPairMemo(contentTypeOf, { limit: 128, maxKeyLength: 256 });

/** How many content types {@link representations} holds now, for tests of the bound. @internal */
export function contentTypeCacheSize(): number {
  return contentTypes.size;
}

/** What each representer remembers of its choices, for tests of the bound. */
const choiceCaches = new WeakMap<Representer, () => { shapes: number; accepts: number }>();

/**
 * How many shapes `representer` holds, and how many `Accept` values in all: at most 16 shapes of
 * at most 64 values. For tests of the bound. @internal
 */
export function choiceCacheSize(representer: Representer): { shapes: number; accepts: number } {
  return choiceCaches.get(representer)?.() ?? { shapes: 0, accepts: 0 };
}

/** RFC 9110 §15.5.7: none of the representations is acceptable. */
function notAcceptable(offers: readonly string[]): HttpError {
  const available = [...new Set(offers.map(essence))];
  return HttpError.notAcceptable(
    available.length > 0
      ? `None of the available representations is acceptable: ${available.join(", ")}`
      : "This resource has no representation for this data",
    { code: "not_acceptable" },
  );
}

/** A representation chosen for a response, its match and the `Content-Type` it is sent with. */
interface Found {
  readonly chosen: Representation;
  readonly match: MediaTypeMatch;
  readonly contentType: string;
}

/**
 * What the choice among the offers depends on besides `Accept`: the offers that can represent the
 * data, and the type the response is labelled with (the version's) or that the data names for
 * itself (a HAL resource's `application/hal+json`). The server's own strings, a few per server.
 */
interface Shape {
  readonly candidates: readonly Representation[];
  /** The choice by `Accept` value; `null`: none of the candidates is acceptable. */
  readonly byAccept: BoundedMemo<Found | null>;
  /** The choice for a request without `Accept` (and a write's fallback), once made. */
  withoutAccept: Found | null | undefined;
}

/** Shapes a representer remembers; the 17th clears them. */
const SHAPES = 16;
/** `Accept` values a shape remembers (each of at most 256 characters); the 65th clears them. */
const ACCEPTS = 64;
/** The longest label or hint a shape is remembered by. */
const SHAPE_KEY_LENGTH = 256;
/** Offers past this many are chosen among without a memo (the shape's mask is a 31-bit number). */
const MASKED_OFFERS = 30;

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === "function";
}

function toBody(body: RepresentationBody): Uint8Array | NodeJS.ReadableStream {
  return typeof body === "string" ? utf8Bytes(body) : body;
}

/**
 * The pipeline's representation step (`createPipeline({ representations: representations(...) })`
 * of `@svc/kernel`): proactive negotiation by `Accept` and `Accept-Language` (RFC 9110 §12.5.1,
 * §12.5.4) among the representations offered, each response serialised once.
 *
 * - GET and HEAD: no acceptable representation of the handler's data → 406 (with the types
 *   available). A request that changes state (POST, PUT, PATCH, DELETE) gets that 406 before its
 *   handler runs, when none of the types its route can answer with is acceptable: the route's
 *   `produces`, or by default the offers that can represent any data (not CSV, whose
 *   `canRepresent` needs a collection the handler has not made yet); once its handler has
 *   run, `Accept` is disregarded rather than refused (§12.5.1: "disregard the header field by
 *   treating the response as if it is not subject to content negotiation"), and the default
 *   representation that can carry the data is sent: no write ever runs for a response that is then
 *   refused.
 * - A vendor type the versioning step chose (`application/vnd.svc.v2+json`) labels the JSON or
 *   XML representation of its suffix; a body that names its own `+json` type (a HAL resource) is
 *   sent as that type when the client accepts it (RFC 6838 §4.2.8).
 * - `Vary: Accept` (and `Accept-Language` when more than one language is offered).
 *
 * @example
 * const svc = expressAdapter(createPipeline({ representations: representations({ offers: [json, xml] }) }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5
 */
export function representations(options: RepresentationsOptions = {}): Representer {
  checkOptionNames("negotiate", options, ["offers", "languages"], "representations");
  // A copy: options are resolved once, whatever becomes of the caller's array.
  const offered: readonly Representation[] = Object.freeze([
    ...validateRepresentations(options.offers ?? defaultRepresentations, "representations", false, "offers"),
  ]);
  const offeredTypes = Object.freeze(offered.map((r) => r.mediaType));
  // What a write's response can be before its data exists: the offers that represent any data.
  // When every offer depends on the data, none is ruled out before the handler runs.
  const unconditional = offered.filter((r) => r.canRepresent === undefined).map((r) => r.mediaType);
  const promised = Object.freeze(unconditional.length > 0 ? unconditional : [...offeredTypes]);
  // Every offer can represent any data: a reply that narrows nothing negotiates among them as
  // they are, without a filtered copy per response.
  const offeredAlways = offered.every((r) => r.canRepresent === undefined);
  const languages = options.languages ?? [];
  if (!Array.isArray(languages)) throw refused("representations", "languages", languages, LANGUAGES);
  for (const l of languages as unknown[]) {
    if (typeof l !== "string" || !LANGUAGE_TAG.test(l))
      throw refused("representations", "languages", l, LANGUAGES);
  }
  const vary = languages.length > 1 ? ["Accept", "Accept-Language"] : ["Accept"];

  /** The representations a reply may take for `data`, in server preference. */
  const candidatesFor = (data: unknown, choice: Choice): readonly Representation[] => {
    const reply = choice.reply;
    if (offeredAlways && !reply.representations && !reply.only && !reply.add) return offered;
    let set = reply.representations ?? offered;
    if (reply.representations) validateRepresentations(set, "reply", true);
    if (reply.only) {
      const only = new Set(reply.only.map(essence));
      set = set.filter((r) => only.has(essence(r.mediaType)));
    }
    if (reply.add) set = [...set, ...validateRepresentations(reply.add, "reply", true, "add")];
    return set.filter((r) => r.canRepresent?.(data) ?? true);
  };

  const languageOf = (request: PipelineRequest): string | undefined =>
    languages.length === 0
      ? undefined
      : (selectLanguage(headerString(request.view.headers["accept-language"]), languages) ?? languages[0]);

  /** The match for `accept` among `candidates`, given the data's own `+json` type (`hint`). */
  const matchFor = (
    accept: string | undefined,
    candidates: readonly Representation[],
    label: string | undefined,
    hint: string | undefined,
  ): Found | undefined => {
    const offers = candidates === offered ? offeredTypes : candidates.map((r) => r.mediaType);
    let match = matchMediaType(accept, offers, label ?? hint);
    const chosen = match === undefined ? undefined : candidates[offers.indexOf(match.offer)];
    if (match === undefined || chosen === undefined) return undefined;
    if (label === undefined && match.mediaType === essence(match.offer)) {
      const own = hintedLabel(accept, match.mediaType, hint);
      if (own !== undefined) match = { ...match, mediaType: own };
    }
    return { chosen, match, contentType: contentTypes.get(match.offer, match.mediaType) };
  };

  /**
   * The shapes of the responses of this representer, by the mask of the offers that can represent
   * the data (bit i: `offered[i]`), then by label, or by hint when there is no label (`""`: none).
   * Bounded: at most {@link SHAPES} shapes, each holding at most {@link ACCEPTS} choices by `Accept`
   * values of at most 256 characters (a longer value is chosen for each time, never held): at most
   * 16 × 64 × 256 characters of keys a representer, whatever clients send.
   */
  const shapes = new Map<number, { labelled: Map<string, Shape>; hinted: Map<string, Shape> }>();
  let shapeCount = 0;
  const allOffers = offered.length > MASKED_OFFERS ? -1 : 2 ** offered.length - 1;

  const maskOf = (data: unknown): number => {
    if (offeredAlways) return allOffers;
    let mask = 0;
    for (let i = 0; i < offered.length; i++) {
      const canRepresent = (offered[i] as Representation).canRepresent;
      if (canRepresent === undefined || canRepresent(data)) mask |= 1 << i;
    }
    return mask;
  };

  const shapeOf = (mask: number, label: string | undefined, hint: string | undefined): Shape | undefined => {
    const key = label ?? hint ?? "";
    let byMask = shapes.get(mask);
    const held = label !== undefined ? byMask?.labelled.get(key) : byMask?.hinted.get(key);
    if (held !== undefined) return held;
    if (key.length > SHAPE_KEY_LENGTH) return undefined;
    if (shapeCount >= SHAPES) {
      shapes.clear();
      shapeCount = 0;
      byMask = undefined;
    }
    if (byMask === undefined) {
      byMask = { labelled: new Map(), hinted: new Map() };
      shapes.set(mask, byMask);
    }
    const candidates = mask === allOffers ? offered : offered.filter((_, i) => (mask & (1 << i)) !== 0);
    const shape: Shape = {
      candidates,
      byAccept: new BoundedMemo((accept) => matchFor(accept, candidates, label, hint) ?? null, {
        limit: ACCEPTS,
        maxKeyLength: 256,
      }),
      withoutAccept: undefined,
    };
    (label !== undefined ? byMask.labelled : byMask.hinted).set(key, shape);
    shapeCount++;
    return shape;
  };

  /**
   * The match for `accept` among `candidates`: the shape's remembered one when there is a shape
   * (`accept` undefined: no `Accept`, or a write's fallback), worked out otherwise.
   */
  const lookup = (
    shape: Shape | undefined,
    candidates: readonly Representation[],
    accept: string | undefined,
    label: string | undefined,
    hint: string | undefined,
  ): Found | undefined => {
    if (shape === undefined) return matchFor(accept, candidates, label, hint);
    if (accept !== undefined) return shape.byAccept.get(accept) ?? undefined;
    if (shape.withoutAccept === undefined)
      shape.withoutAccept = matchFor(undefined, candidates, label, hint) ?? null;
    return shape.withoutAccept ?? undefined;
  };

  /**
   * The representation `choice` takes for `data` and `accept`: remembered per shape and `Accept`
   * value when the reply negotiates among the representer's own offers, worked out each time
   * when it names its own.
   */
  const choose = (accept: string | undefined, data: unknown, choice: Choice, native: unknown): Found => {
    const { reply, label } = choice;
    const own = allOffers === -1 || reply.representations || reply.only || reply.add;
    const mask = own ? undefined : maskOf(data);
    const hint = label === undefined ? mediaTypeHint(data) : undefined;
    const shape = mask === undefined ? undefined : shapeOf(mask, label, hint);
    const candidates = shape?.candidates ?? candidatesFor(data, choice);
    let found = lookup(shape, candidates, accept, label, hint);
    if (found === undefined && choice.fallback) found = lookup(shape, candidates, undefined, label, hint);
    if (found === undefined) {
      const offers = candidates.map((r) => r.mediaType);
      if (negotiateChannel.hasSubscribers) publishNotAcceptable(native, offers);
      throw notAcceptable(offers);
    }
    return found;
  };

  /** The representation made: synchronously when the serializer answers synchronously. */
  const serialize = (
    found: Found,
    language: string | undefined,
    data: unknown,
  ): Represented | Promise<Represented> => {
    const serialized = found.chosen.serialize(data, { mediaType: found.match.mediaType, language });
    return isPromiseLike(serialized)
      ? Promise.resolve(serialized).then((body) => made(found, language, data, body))
      : made(found, language, data, serialized);
  };

  const made = (
    found: Found,
    language: string | undefined,
    data: unknown,
    body: RepresentationBody,
  ): Represented => ({
    contentType: found.contentType,
    language,
    body: toBody(body),
    vary,
    fields: found.chosen.fields?.(data),
  });

  const representer: Representer = {
    preflight(request, label, changesState, produces) {
      if (!changesState) return;
      const types = produces ?? promised;
      // RFC 9110 §15.3.5: a 204 carries no content, so no representation of it can be refused.
      if (types.length === 0) return;
      const accept = headerString(request.view.headers.accept);
      if (matchMediaType(accept, types, label) !== undefined) return;
      // A client naming only a structured-suffix type a body may declare for itself (a HAL
      // resource's application/hal+json) may still be served by the JSON representation.
      const suffixed = accept?.match(/[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.-]+\+[a-z0-9!#$&^_.-]+/gi) ?? [];
      for (const type of suffixed) if (matchMediaType(accept, types, type) !== undefined) return;
      if (negotiateChannel.hasSubscribers) publishNotAcceptable(request.native, types);
      throw notAcceptable(types);
    },

    represent(request, data, choice) {
      const found = choose(headerString(request.view.headers.accept), data, choice, request.native);
      return serialize(found, languageOf(request), data);
    },

    async *variants(request, data, choice) {
      const candidates = candidatesFor(data, choice);
      const language = languageOf(request);
      const hint = choice.label === undefined ? mediaTypeHint(data) : undefined;
      const preferred = matchFor(headerString(request.view.headers.accept), candidates, choice.label, hint);
      if (preferred !== undefined) yield await serialize(preferred, language, data);
      for (const candidate of candidates) {
        if (candidate === preferred?.chosen) continue;
        const own = matchFor(undefined, [candidate], choice.label, hint);
        if (own !== undefined) yield await serialize(own, language, data);
      }
    },
  };
  choiceCaches.set(representer, () => {
    let accepts = 0;
    for (const byMask of shapes.values())
      for (const map of [byMask.labelled, byMask.hinted])
        for (const shape of map.values()) accepts += shape.byAccept.size;
    return { shapes: shapeCount, accepts };
  });
  return representer;
}
