/** Gives a slot back; call it exactly once. */
export type Release = () => void;

/**
 * A counting semaphore with a bounded wait queue: at most `limit` holders at once, at most
 * `queue` waiting, and anything beyond is refused at once (`undefined`) rather than queued
 * without bound. Waiters are served first come, first served.
 */
export class ConcurrencyGate {
  readonly limit: number;
  readonly queue: number;
  #active = 0;
  readonly #waiting: Array<(release: Release) => void> = [];

  constructor(limit: number, queue: number) {
    this.limit = limit;
    this.queue = queue;
  }

  /** Holders right now. */
  get active(): number {
    return this.#active;
  }

  /** Waiters right now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * A slot: a release function at once when one is free, a promise of one when the queue has
   * room, `undefined` when both are full (shed the work).
   */
  enter(): Release | Promise<Release> | undefined {
    if (this.#active < this.limit) {
      this.#active++;
      return this.#releaser();
    }
    if (this.#waiting.length >= this.queue) return undefined;
    return new Promise<Release>((resolve) => this.#waiting.push(resolve));
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter: `active` stays the same.
      if (next) next(this.#releaser());
      else this.#active--;
    };
  }
}
