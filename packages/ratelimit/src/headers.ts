import type { ServerResponse } from "node:http";
import { requestSlot } from "@svc/kernel/internal";
import { refused } from "./option-error.js";
import type { Decision, RateLimitPolicy } from "./types.js";

/**
 * How `X-RateLimit-Reset` is written.
 * @example
 * rateLimit({ limit: 100, resetFormat: "delta-seconds" });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
 */
export type ResetFormat = "epoch-seconds" | "delta-seconds";

/**
 * A revision of the IETF RateLimit header fields draft whose syntax the standard headers follow,
 * as express-rate-limit's `standardHeaders` names them:
 *
 * - `"draft-6"`: `RateLimit-Limit: 100`, `RateLimit-Remaining: 99`, `RateLimit-Reset: 60` and
 *   `RateLimit-Policy: 100;w=60` (one policy: the tightest limiter's);
 * - `"draft-7"`: `RateLimit: limit=100, remaining=99, reset=60` (a Dictionary) and
 *   `RateLimit-Policy: 100;w=60` (one policy: the tightest limiter's);
 * - `"draft-8"`, `"draft-9"`, `"draft-10"` (one syntax): `RateLimit-Policy: "default";q=100;w=60`
 *   and `RateLimit: "default";r=99;t=60`, Lists with an item per limiter on the request.
 *
 * @example
 * rateLimit({ limit: 100, standardHeaders: "draft-7" });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-07#section-3
 */
export type RateLimitDraft = "draft-6" | "draft-7" | "draft-8" | "draft-9" | "draft-10";

/** Every {@link RateLimitDraft}, for validation. */
export const RATELIMIT_DRAFTS: readonly RateLimitDraft[] = [
  "draft-6",
  "draft-7",
  "draft-8",
  "draft-9",
  "draft-10",
];

/**
 * Which headers {@link setRateLimitHeaders} writes.
 * @example
 * const settings: HeaderSettings = { legacy: true, standard: false, resetFormat: "epoch-seconds", policyName: "api" };
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export interface HeaderSettings {
  /** `X-RateLimit-Limit` / `-Remaining` / `-Reset` (de facto headers, no standard). */
  legacy: boolean;
  /**
   * The IETF draft's fields in the syntax of one of its revisions ({@link RateLimitDraft}); `true`
   * is `"draft-10"` (`RateLimit-Policy` and `RateLimit` Lists), `false` none.
   */
  standard: boolean | RateLimitDraft;
  resetFormat: ResetFormat;
  /** The policy name in the IETF headers (an RFC 8941 string). */
  policyName: string;
}

/** Whole seconds, rounded up, never negative: a client waiting this long never comes back early. */
export function ceilSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/**
 * The `t` (reset) of one decision, in seconds. Allowed: until the quota is back in full
 * (`resetAt`). Denied, with a finite wait: the `Retry-After` of the 429 (the same whole seconds,
 * at least 1), since draft-ietf-httpapi-ratelimit-headers-10: "If a response contains both
 * the Retry-After and the RateLimit header fields, the reset keyword value SHOULD reference the
 * same point in time as the Retry-After field value." For `gcra` and `sliding-window` the full
 * refill (`resetAt`) is later than the moment one more request fits.
 */
function resetSeconds(decision: Decision): number {
  if (!decision.allowed && Number.isFinite(decision.retryAfterMs))
    return Math.max(1, ceilSeconds(decision.retryAfterMs));
  return ceilSeconds(decision.resetAt - decision.now);
}

/**
 * RFC 8941 §3.3.1: "Integers have a range of -999,999,999,999,999 to 999,999,999,999,999
 * inclusive (i.e., up to fifteen decimal digits)", and a parser must "fail parsing" a longer
 * one, which takes the whole field with it. A limit may be any safe integer (a byte quota, or
 * `Number.MAX_SAFE_INTEGER` for a plan without a practical limit), so the draft's `q`, `r`, `t`
 * and `w` are written as at most the largest sf-integer.
 */
const MAX_SF_INTEGER = 999_999_999_999_999;

function sfInteger(n: number): number {
  return Math.min(n, MAX_SF_INTEGER);
}

/** RFC 8941 §3.3.3 sf-string: DQUOTE, with `\` and `"` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Longest policy name: with at most {@link MAX_POLICIES} policies, both fields stay under 1 KiB. */
export const MAX_POLICY_NAME = 64;

/**
 * At most this many policies are listed on one response (the tightest are kept), so a route
 * behind many limiters cannot grow its header section without bound.
 */
export const MAX_POLICIES = 8;

/**
 * Whether `name` can be a policy name: 1 to {@link MAX_POLICY_NAME} printable ASCII characters
 * (RFC 8941 §3.3.3: an sf-string holds only 0x20-0x7E; anything else would be refused by
 * `setHeader` on every request).
 */
export function isPolicyName(name: unknown): name is string {
  return (
    typeof name === "string" &&
    name.length > 0 &&
    name.length <= MAX_POLICY_NAME &&
    /^[\x20-\x7e]+$/.test(name)
  );
}

/** What `standardHeaders` takes, as a refusal says it. */
const STANDARD_HEADERS = `true (RateLimit-Policy and RateLimit, draft-ietf-httpapi-ratelimit-headers-10), false, or the draft whose syntax to send: ${RATELIMIT_DRAFTS.map((d) => `"${d}"`).join(", ")}`;

/**
 * The `standardHeaders` option, checked: `true` when left out, else `true`, `false` or a
 * {@link RateLimitDraft}; a refusal names `owner` (`"rate limit"`, `"rateLimitOpenApi"`).
 */
export function standardHeadersOf(value: unknown, owner: string): boolean | RateLimitDraft {
  const standard = value ?? true;
  if (typeof standard === "boolean" || RATELIMIT_DRAFTS.includes(standard as RateLimitDraft))
    return standard as boolean | RateLimitDraft;
  throw refused(owner, "standardHeaders", standard, STANDARD_HEADERS);
}

/**
 * The syntax family of a `standard` setting: `"list"` (draft-8 to -10), `"draft-7"`, `"draft-6"`,
 * or undefined for none. Drafts 8, 9 and 10 write the same fields the same way.
 */
type Family = "list" | "draft-7" | "draft-6";

function familyOf(standard: HeaderSettings["standard"]): Family | undefined {
  if (standard === false) return undefined;
  if (standard === true || standard === "draft-8" || standard === "draft-9" || standard === "draft-10")
    return "list";
  if (standard === "draft-7" || standard === "draft-6") return standard;
  throw refused("rate limit", "standardHeaders", standard, STANDARD_HEADERS);
}

/** One limiter's decision on a response. */
interface Report {
  decision: Decision;
  policy: RateLimitPolicy;
  settings: HeaderSettings;
  /** The policy name as listed: `policyName`, or `policyName-2`... when another limiter used it. */
  name: string;
}

/**
 * Where the reports on one response are kept: with their owner (Express's `res`, or the request a
 * gate decides for: every limiter on that request adds to one list), so they live and go with it.
 */
const reports = requestSlot<Report[]>();

/** The response fields of the rate limit reports, by name as written on the wire. */
export type RateLimitFields = Record<string, string>;

/** Whether `a` leaves the client less room than `b`: denied first, then fewer remaining, then the later reset. */
function tighter(a: Decision, b: Decision): boolean {
  if (a.allowed !== b.allowed) return !a.allowed;
  if (a.remaining !== b.remaining) return a.remaining < b.remaining;
  return a.resetAt > b.resetAt;
}

/** The tightest decision reported for `owner` so far, if any. */
export function tightestDecision(owner: object): Decision | undefined {
  let best: Decision | undefined;
  for (const r of reports.get(owner) ?? []) if (!best || tighter(r.decision, best)) best = r.decision;
  return best;
}

function uniqueName(list: readonly Report[], wanted: string): string {
  let name = wanted;
  for (let n = 2; list.some((r) => r.name === name); n++) name = `${wanted}-${n}`;
  return name;
}

/**
 * Adds one limiter's decision to the rate limit headers of `res` (before the response or the error
 * is sent). Several limiters on one request are all reported: each is a policy in `RateLimit-Policy`
 * and `RateLimit`, and `X-RateLimit-*` shows the tightest of them (the one that denies first).
 *
 * @example
 * setRateLimitHeaders(res, decision, limiter.policy, { legacy: true, standard: true,
 *   resetFormat: "epoch-seconds", policyName: "default" });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10#section-3
 */
export function setRateLimitHeaders(
  res: ServerResponse,
  decision: Decision,
  policy: RateLimitPolicy,
  settings: HeaderSettings,
): void {
  if (res.headersSent) return;
  const fields = reportDecision(res, decision, policy, settings);
  if (fields === undefined) return;
  for (const name of Object.keys(fields)) res.setHeader(name, fields[name] as string);
}

/**
 * Adds one limiter's decision to the reports of `owner` (a response, or the request a gate decides
 * for) and answers the rate limit fields of every report so far, to set on the response; undefined
 * when the list is full and this decision is not tighter than any on it (nothing changes).
 */
export function reportDecision(
  owner: object,
  decision: Decision,
  policy: RateLimitPolicy,
  settings: HeaderSettings,
): RateLimitFields | undefined {
  const list = reports.get(owner);
  if (!list) {
    // The first (often the only) limiter on this response.
    const name = settings.policyName;
    reports.set(owner, [{ decision, policy, settings, name }]);
    return singleFields(decision, policy, settings, name);
  }
  const report: Report = { decision, policy, settings, name: uniqueName(list, settings.policyName) };
  if (list.length < MAX_POLICIES) list.push(report);
  else {
    // Full: the new decision replaces the loosest one if it is tighter.
    let loosest = 0;
    for (let i = 1; i < list.length; i++)
      if (tighter((list[loosest] as Report).decision, (list[i] as Report).decision)) loosest = i;
    if (!tighter(decision, (list[loosest] as Report).decision)) return undefined;
    list[loosest] = report;
  }
  return allFields(list);
}

/**
 * What a limiter's fields say that depends on its policy, its header settings, its policy name and
 * the decision's `limit` alone, written once rather than on every response: the `RateLimit-Policy`
 * value, the quoted name that starts its `RateLimit` item, `X-RateLimit-Limit`.
 */
interface PolicyText {
  readonly settings: HeaderSettings;
  readonly name: string;
  readonly limit: number;
  readonly family: Family | undefined;
  /** `X-RateLimit-Limit`. */
  readonly legacyLimit: string;
  /** The policy name as an sf-string (drafts 8 to 10). */
  readonly item: string;
  /** `RateLimit-Policy`: the item with `q` and `w` (drafts 8 to 10), or the limit with `w` (6, 7). */
  readonly policyField: string;
}

/**
 * The text of each policy's fields, by policy (a limiter's own, or one of its at most 64 cached
 * per-request limits): one entry per live policy object, for the last settings, name and limit
 * it was written for (another replaces it), so it never holds more than the policies do.
 */
const policyTexts = new WeakMap<RateLimitPolicy, PolicyText>();

export function policyText(
  decision: Decision,
  policy: RateLimitPolicy,
  settings: HeaderSettings,
  name: string,
): PolicyText {
  const known = policyTexts.get(policy);
  if (
    known !== undefined &&
    known.settings === settings &&
    known.name === name &&
    known.limit === decision.limit
  )
    return known;
  const family = familyOf(settings.standard);
  const item = sfString(name);
  const text: PolicyText = {
    settings,
    name,
    limit: decision.limit,
    family,
    legacyLimit: String(decision.limit),
    item,
    policyField: family === "list" ? policyItem(item, decision, policy) : quotaPolicy(decision, policy),
  };
  policyTexts.set(policy, text);
  return text;
}

/** The fields of one limiter's decision: the fields the loop below joins, for a single item. */
function singleFields(
  decision: Decision,
  policy: RateLimitPolicy,
  settings: HeaderSettings,
  name: string,
): RateLimitFields {
  const text = policyText(decision, policy, settings, name);
  const out: RateLimitFields = {};
  if (settings.legacy) writeLegacy(out, decision, settings, text.legacyLimit);
  const { family } = text;
  if (family === "list") {
    out["RateLimit-Policy"] = text.policyField;
    out.RateLimit = limitItem(text.item, decision);
  } else if (family !== undefined) writeSingle(out, family, decision, text.policyField);
  return out;
}

/** `w`: the window in whole seconds, at least 1 (every draft: a positive Integer of seconds). */
function windowSeconds(policy: RateLimitPolicy): number {
  return sfInteger(Math.max(1, ceilSeconds(policy.windowMs)));
}

/**
 * The fields of draft-6 or draft-7, which describe one quota: the tightest limiter's.
 * draft-ietf-httpapi-ratelimit-headers-06 §3.1: "The expiring-limit MUST be set to the service
 * limit that is closest to reaching its limit"; `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (§3.4: "the number of seconds until the quota associated with the
 * expiring-limit resets") are each an Integer. draft-07 §3 puts them in one `RateLimit`
 * Dictionary, keys `limit`, `remaining` and `reset`. Both list quota policies in
 * `RateLimit-Policy` as Integers with a `w` parameter (the window, seconds), and "Two quota
 * policies MUST NOT be associated with the same quota units value", so only the one is listed.
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-06#section-3
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-07#section-3
 */
function writeSingle(
  out: RateLimitFields,
  family: "draft-6" | "draft-7",
  decision: Decision,
  policyField: string,
): void {
  const limit = sfInteger(decision.limit);
  const remaining = sfInteger(decision.remaining);
  const reset = sfInteger(resetSeconds(decision));
  out["RateLimit-Policy"] = policyField;
  if (family === "draft-7") {
    out.RateLimit = `limit=${limit}, remaining=${remaining}, reset=${reset}`;
    return;
  }
  out["RateLimit-Limit"] = String(limit);
  out["RateLimit-Remaining"] = String(remaining);
  out["RateLimit-Reset"] = String(reset);
}

/** `RateLimit-Policy` of draft-6 and draft-7: the limit, with the window as `w`. */
function quotaPolicy(decision: Decision, policy: RateLimitPolicy): string {
  return `${sfInteger(decision.limit)};w=${windowSeconds(policy)}`;
}

/** One quota policy Item of `RateLimit-Policy` (draft-10 §3.1), its Integers within RFC 8941 §3.3.1. */
function policyItem(name: string, decision: Decision, policy: RateLimitPolicy): string {
  return `${name};q=${sfInteger(decision.limit)};w=${windowSeconds(policy)}`;
}

/** One service limit Item of `RateLimit` (draft-10 §4.1), its Integers within RFC 8941 §3.3.1. */
function limitItem(name: string, decision: Decision): string {
  return `${name};r=${sfInteger(decision.remaining)};t=${sfInteger(resetSeconds(decision))}`;
}

/** The X-RateLimit fields; `limit`, the limit's text when the caller has it already. */
function writeLegacy(
  out: RateLimitFields,
  decision: Decision,
  settings: HeaderSettings,
  limit = String(decision.limit),
): void {
  out["X-RateLimit-Limit"] = limit;
  out["X-RateLimit-Remaining"] = String(decision.remaining);
  out["X-RateLimit-Reset"] = legacyReset(decision, settings);
}

/** `X-RateLimit-Reset`: epoch seconds, or seconds from now (`resetFormat`). */
function legacyReset(decision: Decision, settings: HeaderSettings): string {
  return String(
    settings.resetFormat === "epoch-seconds"
      ? Math.ceil(decision.resetAt / 1000)
      : ceilSeconds(decision.resetAt - decision.now),
  );
}

/**
 * The fields of every limiter on a response. The standard fields take the syntax of the first
 * limiter that sends them: the drafts spell `RateLimit` and `RateLimit-Policy` in ways a client
 * cannot read together, so limiters naming different drafts are all written in that one. Draft-6
 * and draft-7 describe one quota, so they carry the tightest limiter's; drafts 8 to 10 list each.
 */
function allFields(list: readonly Report[]): RateLimitFields {
  const out: RateLimitFields = {};
  let legacy: Report | undefined;
  let family: Family | undefined;
  let single: Report | undefined;
  const policies: string[] = [];
  const limits: string[] = [];
  for (const r of list) {
    const { decision, settings } = r;
    if (settings.legacy && (!legacy || tighter(decision, legacy.decision))) legacy = r;
    const own = familyOf(settings.standard);
    if (own === undefined) continue;
    family ??= own;
    if (family !== "list") {
      if (!single || tighter(decision, single.decision)) single = r;
      continue;
    }
    const name = sfString(r.name);
    // draft-10 §3.1: 'A quota policy Item contains an identifier for the policy and a set of
    // Parameters'; §3.1.1 'q' "MUST be a non-negative Integer"; §3.1.3 'w' "MUST be a
    // non-negative, non-zero, Integer value expressing an interval in seconds".
    policies.push(policyItem(name, decision, r.policy));
    // draft-10 §4.1: "Each service limit Item identifies the quota policy (Section 3.1)
    // associated with the request"; §4.1.1 'r' remaining units, §4.1.2 't' "the number of
    // seconds until additional quota associated with the quota policy is made available".
    limits.push(limitItem(name, decision));
  }
  if (legacy) writeLegacy(out, legacy.decision, legacy.settings);
  if (single && family !== undefined && family !== "list")
    writeSingle(out, family, single.decision, quotaPolicy(single.decision, single.policy));
  if (policies.length > 0) {
    // draft-10 §3: 'The "RateLimit-Policy" response header field is a non-empty List[SF] of
    // Quota Policy Items'; §4: the RateLimit field "is expressed as a List[SF] of Service Limit
    // Items". One field each, members joined as RFC 8941 §4.1.1 serializes a List (", ").
    out["RateLimit-Policy"] = policies.join(", ");
    out.RateLimit = limits.join(", ");
  }
  return out;
}
