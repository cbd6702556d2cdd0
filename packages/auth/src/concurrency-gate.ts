/** Gives a slot back; call it exactly once. */
export type Release = () => void;

/** A waiter: handed a slot, or `undefined` when a priority arrival took its place in the queue. */
type Waiter = (release: Release | undefined) => void;

/**
 * A counting semaphore with a bounded wait queue: at most `limit` holders at once, at most
 * `queue` waiting, and anything beyond is refused at once (`undefined`) rather than queued
 * without bound. Waiters are served first come, first served, priority ones first; a priority
 * arrival that finds the queue full takes the place of the latest ordinary waiter, which is
 * refused (its promise resolves to `undefined`). A slot once held is never taken back.
 */
export class ConcurrencyGate {
  readonly limit: number;
  readonly queue: number;
  #active = 0;
  readonly #first: Waiter[] = [];
  readonly #rest: Waiter[] = [];

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
    return this.#first.length + this.#rest.length;
  }

  /**
   * A slot: a release function at once when one is free, a promise of one when the queue has
   * room (of `undefined` if a priority arrival later takes its place), `undefined` when both are
   * full and nothing can make room (shed the work).
   */
  enter(priority = false): Release | Promise<Release | undefined> | undefined {
    if (this.#active < this.limit) {
      this.#active++;
      return this.#releaser();
    }
    if (this.waiting >= this.queue) {
      const displaced = priority ? this.#rest.pop() : undefined;
      if (displaced === undefined) return undefined;
      displaced(undefined);
    }
    return new Promise<Release | undefined>((resolve) => (priority ? this.#first : this.#rest).push(resolve));
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#first.shift() ?? this.#rest.shift();
      // The slot passes straight to the next waiter: `active` stays the same.
      if (next) next(this.#releaser());
      else this.#active--;
    };
  }
}
