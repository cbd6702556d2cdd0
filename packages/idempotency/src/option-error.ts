import type { OptionError } from "@svc/kernel";
import { refusedOption, StoreOptions } from "@svc/kernel/internal";

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
 * A store's options, read the way every store of the package reads them: an object holding its
 * client (the first of `known`) and no name outside `known`.
 *
 * @example const o = storeOptions("RedisStore", options, ["client", "prefix", "timeoutMs", "maxRecordBytes"]);
 */
export function storeOptions<Options extends object>(
  owner: string,
  options: Options,
  known: readonly [string, ...string[]],
): StoreOptions<Options> {
  const [client, ...rest] = known;
  const accepted = `an object { ${[client, ...rest.map((name) => `${name}?`)].join(", ")} }`;
  return new StoreOptions("idempotency", owner, options, known, accepted);
}

/** A store's `timeoutMs` when none is given: the longest wait for one round trip. */
export const STORE_TIMEOUT_MS = 1000;

/** A store's `maxRecordBytes` (default 1 MiB): an integer of at least 1024. */
export function storeMaxRecordBytes(owner: string, value: unknown = 1_048_576): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1024) {
    throw optionError(owner, "maxRecordBytes", value, "an integer of at least 1024 (bytes)");
  }
  return value as number;
}
