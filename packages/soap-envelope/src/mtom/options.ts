import { checkObject, optionError } from "../options.js";
import type { ResolvedMtom } from "./xop.js";

/** The `mtom` option: how multipart/related XOP packages (SOAP MTOM) are received. */
export interface MtomOptions {
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

const KEYS = ["maxParts", "maxPartBytes", "maxHeaderBytes"] as const;

/** The `mtom` option, checked: `false` turns MTOM off; undefined is `{}`. */
export function resolveMtom(value: unknown, maxBytes: number): ResolvedMtom | undefined {
  if (value === false) return undefined;
  if (value === true) {
    throw optionError("mtom", value, "false or an object with maxParts, maxPartBytes, maxHeaderBytes");
  }
  checkObject(value, "mtom", KEYS);
  const given = (value ?? {}) as MtomOptions;
  const resolved = { maxParts: 16, maxPartBytes: maxBytes, maxHeaderBytes: 4096 };
  for (const key of KEYS) {
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
