/** A response as stored for replay. */
export interface StoredResponse {
  /** The status code the handler sent. */
  status: number;
  /** The replayable headers (lower-case names), see `replayHeaders`. */
  headers: Record<string, string | string[]>;
  /** The body bytes, exactly as the handler wrote them (empty when `bodyOmitted`). */
  body: Uint8Array;
  /**
   * The body was larger than the store keeps, and left out: a replay sends the status and the
   * headers with no content and `Idempotent-Body-Omitted: true`.
   */
  bodyOmitted?: true;
}

/** The answer of {@link IdempotencyStore.claim}. */
export type ClaimResult =
  /**
   * No live record: the caller owns the key until the lease ends, and must present `token`.
   * `leaseExpired`: the record replaced was another execution's claim whose lease ran out (it
   * died, or ran past its lease), for a store that can tell (`PostgresStore`); absent otherwise.
   */
  | { readonly outcome: "claimed"; readonly token: string; readonly leaseExpired?: true }
  /** Another request holds the lease. */
  | { readonly outcome: "in-flight"; readonly fingerprint: string; readonly leaseRemainingMs: number }
  /** The request ran before: replay `response`. */
  | { readonly outcome: "completed"; readonly fingerprint: string; readonly response: StoredResponse };

/**
 * Where idempotency records live. Every method is one atomic step: a claim is never
 * read-then-write, and `complete`/`release`/`renew` only act while the caller's fencing token is
 * still the record's token, so a worker whose lease expired cannot overwrite a newer result.
 *
 * @example
 * const r = await store.claim("user:1:POST:/orders:k1", fp, 60_000);
 * if (r.outcome === "claimed") await store.complete(key, r.token, response, 86_400_000);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export interface IdempotencyStore {
  /** Claims `key` for `leaseMs` unless a live record exists, which is returned instead. */
  claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult>;
  /** Stores the response for `retentionMs`; false when `token` no longer owns the key. */
  complete(key: string, token: string, response: StoredResponse, retentionMs: number): Promise<boolean>;
  /** Drops the in-flight record so a retry may run; false when `token` no longer owns the key. */
  release(key: string, token: string): Promise<boolean>;
  /**
   * Extends the lease of an in-flight record to `leaseMs` from now while `token` still owns it;
   * false when the record is gone, completed, or owned by a newer token. Optional: with a store
   * that lacks it, a claim simply lasts `leaseMs` (a handler running longer may run twice).
   */
  renew?(key: string, token: string, leaseMs: number): Promise<boolean>;
  /**
   * The response recorded under `key` by the execution holding `token`, or undefined while it is
   * in flight (or the record is another's, or gone). Optional: a store whose records can commit
   * with the handler's own transaction (`PostgresStore`) has it, for the claim to learn, after a
   * failure, whether that transaction committed.
   */
  recorded?(key: string, token: string): Promise<StoredResponse | undefined>;
}

/**
 * The record kept for a response too large to store whole: status and headers, no body, the
 * `bodyOmitted` marker. `Content-Type` and `Content-Encoding` go, since no content is left for
 * them to describe (RFC 9110 §8.3, §8.4).
 *
 * @example const small = withoutBody(response); // small.body.byteLength === 0
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export function withoutBody(response: StoredResponse): StoredResponse {
  const headers = { ...response.headers };
  delete headers["content-type"];
  delete headers["content-encoding"];
  return { status: response.status, headers, body: new Uint8Array(), bodyOmitted: true };
}

/**
 * The largest form of `response` a store keeps within its record bound, `fits` saying whether a
 * form is within it: the whole response; else without its body ({@link withoutBody}); else, when
 * its replayed headers alone pass the bound (a long `Location`, a large field in `replayHeaders`),
 * its status alone, with the `bodyOmitted` marker. Header bytes count like body bytes, so no
 * record passes the bound whatever the handler set. draft-ietf-httpapi-idempotency-key-header
 * §2.6: a retry still gets the result (the status), and the handler never runs twice.
 *
 * @example const kept = keptWithin(response, (r) => sizeOf(r) <= maxRecordBytes);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export function keptWithin(
  response: StoredResponse,
  fits: (form: StoredResponse) => boolean,
): StoredResponse {
  if (fits(response)) return response;
  const bodiless = withoutBody(response);
  if (fits(bodiless)) return bodiless;
  return statusOnly(response);
}

/** The smallest record of a response: its status, no header, no body, the `bodyOmitted` marker. */
export function statusOnly(response: StoredResponse): StoredResponse {
  return { status: response.status, headers: {}, body: new Uint8Array(), bodyOmitted: true };
}
