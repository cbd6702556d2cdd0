import { type DurableObjectNamespaceLike, isDurableObjectNamespace } from "./durable-object.js";
import { checkOptionNames, type OptionError, refusedOption } from "./option-error.js";
import { isTimerDelay, MAX_TIMER_MS } from "./timer.js";

/**
 * The options of a shared store (`@svc/ratelimit`'s, `@svc/idempotency`'s), read the same way by
 * each: checked once, at construction, each refusal naming the store, the option, what it got and
 * what it accepts, with a stable code.
 *
 * @internal
 */
export class StoreOptions<Options extends object> {
  /** The options, checked to be an object with no name outside the store's own. */
  readonly values: Options;
  readonly #pkg: string;
  readonly #owner: string;

  /**
   * Refuses `options` that are not an object (code `ERR_SVC_<PACKAGE>_OPTIONS`, the message naming
   * `accepted`, by default the first of `known`: a store is given at least its client, so there is
   * no default) or that hold a name not in `known` (`ERR_SVC_<PACKAGE>_UNKNOWN_OPTION`, with the
   * closest known name).
   * @example const o = new StoreOptions("ratelimit", "RedisStore", options, ["client", "prefix", "timeoutMs"]);
   */
  constructor(
    pkg: string,
    owner: string,
    options: Options,
    known: readonly [string, ...string[]],
    accepted = `an object with ${known[0]}`,
  ) {
    this.#pkg = pkg;
    this.#owner = owner;
    if (typeof options !== "object" || options === null) throw this.refused("options", options, accepted);
    checkOptionNames(pkg, options, known, owner);
    this.values = options;
  }

  /** The refusal of `option`: `<owner>: <option> must be <accepted>, got <given>`, coded. */
  refused(option: string, given: unknown, accepted: string): OptionError {
    return refusedOption(this.#pkg, option, given, accepted, `${this.#owner}: ${option}`);
  }

  /** The `prefix` option (of the keys or object names the store writes): a string. */
  prefix(fallback: string): string {
    const prefix = this.#value("prefix") ?? fallback;
    if (typeof prefix !== "string") throw this.refused("prefix", prefix, "a string");
    return prefix;
  }

  /**
   * The `timeoutMs` option, a delay a timer honours: Node.js fires a timer of more than 2^31 - 1 ms
   * after 1 ms instead ("TimeoutOverflowWarning"), so every call would time out at once.
   */
  timeoutMs(fallback: number): number {
    const timeoutMs = this.#value("timeoutMs") ?? fallback;
    if (!isTimerDelay(timeoutMs)) {
      throw this.refused(
        "timeoutMs",
        timeoutMs,
        `a positive number of milliseconds, at most ${MAX_TIMER_MS} (the longest setTimeout)`,
      );
    }
    return timeoutMs;
  }

  /** The `namespace` option: a Durable Object namespace binding, `binding` saying which. */
  namespace(binding: string): DurableObjectNamespaceLike {
    const namespace = this.#value("namespace");
    if (!isDurableObjectNamespace(namespace))
      throw this.refused("namespace", namespace, `a Durable Object namespace binding (${binding})`);
    return namespace;
  }

  #value(name: string): unknown {
    return (this.values as Record<string, unknown>)[name];
  }
}
