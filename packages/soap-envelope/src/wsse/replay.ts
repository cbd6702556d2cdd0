import { SoapFault } from "../envelope/fault.js";
import { wsseFault } from "./faults.js";

/**
 * The messages accepted within their freshness window (WS-Security 1.1 §13.2: "a message
 * receiver SHOULD ... keep a cache of ... recently received messages"), each kept until its
 * Timestamp would be refused anyway. Bounded: at most `maxEntries` keys (a 44-character digest
 * and a number each, some 150 bytes), the expired ones swept when it is full; when every entry is
 * still live, the new message is refused rather than an entry forgotten.
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html (§13)
 */
export class ReplayCache {
  readonly #until = new Map<string, number>();
  constructor(readonly maxEntries: number) {}

  /** Refuses a key accepted before and still within its window. */
  check(key: string, now: number): void {
    const until = this.#until.get(key);
    if (until !== undefined && until >= now) {
      throw wsseFault("InvalidSecurity", "this message was already received (a replay)");
    }
  }

  /** Remembers an accepted message until `until`. */
  remember(key: string, until: number, now: number): void {
    if (this.#until.size >= this.maxEntries && !this.#until.has(key)) {
      for (const [k, u] of this.#until) if (u < now) this.#until.delete(k);
      if (this.#until.size >= this.maxEntries) {
        throw new SoapFault({
          code: "Receiver",
          reason: "Too many recent messages to tell a replay from a new one; try again later",
        });
      }
    }
    this.#until.delete(key);
    this.#until.set(key, until);
  }

  get size(): number {
    return this.#until.size;
  }
}
