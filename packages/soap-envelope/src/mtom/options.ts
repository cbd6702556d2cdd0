import { checkObject, optionError } from "../options.js";
import type { ResolvedMtom } from "./xop.js";

/** The `mtom` option: how multipart/related XOP packages (SOAP MTOM) are received and sent. */
export interface MtomOptions {
  /**
   * When a response is sent as an XOP package: `"as-requested"`, when the request was one (a
   * client that sends MTOM reads it, as WCF's MTOM binding does both ways); `"always"`; `"never"`.
   * A package is sent only when the response holds an `xs:base64Binary` value of at least
   * `threshold` octets; faults never are.
   * @default "as-requested"
   */
  respond?: "as-requested" | "always" | "never";
  /**
   * The fewest octets an `xs:base64Binary` value of a response has to go in an attachment of its
   * own; smaller ones stay in the envelope as base64, where a part's headers would cost more than
   * base64's third.
   * @default 1024
   */
  threshold?: number;
  /**
   * Most MIME parts in one package, the root part included; one more is refused with a Sender
   * (SOAP 1.1: Client) fault.
   * @default 16
   */
  maxParts?: number;
  /**
   * Most bytes of one part's content, after its transfer encoding is undone. The whole body stays
   * within `limits.maxBytes` (413 past it).
   * @default limits.maxBytes
   */
  maxPartBytes?: number;
  /**
   * Most bytes of one part's header section (`Content-ID`, `Content-Type`, ...).
   * @default 4096
   */
  maxHeaderBytes?: number;
}

const BOUNDS = ["maxParts", "maxPartBytes", "maxHeaderBytes"] as const;
const RESPONDS = ["as-requested", "always", "never"] as const;

/** The `mtom` option, checked: `false` turns MTOM off; undefined is `{}`. */
export function resolveMtom(value: unknown, maxBytes: number): ResolvedMtom | undefined {
  if (value === false) return undefined;
  if (value === true) {
    throw optionError(
      "mtom",
      value,
      "false or an object with maxParts, maxPartBytes, maxHeaderBytes, respond, threshold",
    );
  }
  checkObject(value, "mtom", [...BOUNDS, "respond", "threshold"]);
  const given = (value ?? {}) as MtomOptions;
  const respond = given.respond ?? "as-requested";
  if (!RESPONDS.includes(respond))
    throw optionError("mtom.respond", respond, '"as-requested", "always" or "never"');
  const threshold = given.threshold ?? 1024;
  if (!Number.isSafeInteger(threshold) || threshold < 0) {
    throw optionError("mtom.threshold", threshold, "a safe integer, 0 or more");
  }
  const resolved = { maxParts: 16, maxPartBytes: maxBytes, maxHeaderBytes: 4096, respond, threshold };
  for (const key of BOUNDS) {
    const n = given[key];
    if (n === undefined) continue;
    if (!Number.isSafeInteger(n) || n < 1) throw optionError(`mtom.${key}`, n, "a positive safe integer");
    resolved[key] = n;
  }
  if (resolved.maxParts < 2) {
    throw optionError("mtom.maxParts", resolved.maxParts, "at least 2 (the root part and an attachment)");
  }
  return resolved;
}
