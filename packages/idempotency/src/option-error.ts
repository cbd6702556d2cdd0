import type { OptionError } from "@svc/kernel";
import { isTimerDelay, MAX_TIMER_MS, refusedOption } from "@svc/kernel/internal";

export type { OptionError };

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is accepted,
 * and carries `code` `ERR_SVC_IDEMPOTENCY_<OPTION>` (`maxBytes` → `ERR_SVC_IDEMPOTENCY_MAX_BYTES`).
 *
 * @example throw optionError("MemoryStore", "maxBytes", 0, "a positive integer")
 */
export function optionError(owner: string, option: string, got: unknown, accepted: string): OptionError {
  return refusedOption("idempotency", option, got, accepted, `${owner}: ${option}`);
}

/**
 * A store's `timeoutMs` (default 1000): a positive timer delay. Node.js fires a timer of more than
 * 2^31 - 1 ms after 1 ms instead ("TimeoutOverflowWarning"), so every call would time out at once
 * and every keyed request get a 503.
 */
export function storeTimeoutMs(owner: string, value: unknown = 1000): number {
  if (!isTimerDelay(value)) {
    throw optionError(
      owner,
      "timeoutMs",
      value,
      `a positive number of milliseconds, at most ${MAX_TIMER_MS} (the longest setTimeout)`,
    );
  }
  return value;
}

/** A store's `maxRecordBytes` (default 1 MiB): an integer of at least 1024. */
export function storeMaxRecordBytes(owner: string, value: unknown = 1_048_576): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1024) {
    throw optionError(owner, "maxRecordBytes", value, "an integer of at least 1024 (bytes)");
  }
  return value as number;
}
