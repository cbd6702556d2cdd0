/**
 * Deadlines of body reads, swept by one coarse timer per duration instead of a timer per read.
 *
 * RFC 9110 §15.5.9 (408 Request Timeout): a server may stop waiting for a request it has not
 * received in full. A per-message `setTimeout` would cost each message a timer object and, when
 * messages come one at a time, a timer list created and torn down with it; here a read is an
 * object linked into a list (reads of one duration expire in the order they started) and the
 * list's one unref'd interval runs only while a read is pending. The interval counts ticks, so a
 * read costs no clock call either: one started at tick `t` expires at tick `t + ticksPerTimeout
 * + 1`, never before `timeoutMs` and at most two ticks (a tenth of the limit each, at most a
 * second) after it (an interval fires late under load, never early).
 */

/** A pending read: linked into its queue until it ends, fails or expires. */
export interface ReadDeadline {
  /** The tick the read started at. */
  tick: number;
  prev: ReadDeadline | undefined;
  next: ReadDeadline | undefined;
  /** Whether the read is still in its queue. */
  linked: boolean;
  /** Called once, from the sweep, when the read has not ended in time. */
  expire: () => void;
}

/** The reads of one duration, oldest first, and the interval that expires them. */
export class DeadlineQueue {
  readonly timeoutMs: number;
  private readonly tickMs: number;
  private readonly ticksPerTimeout: number;
  private ticks = 0;
  private head: ReadDeadline | undefined;
  private tail: ReadDeadline | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
    // A tenth of the limit (10 ms to 1 s): a read outlives its limit by at most that much.
    this.tickMs = Math.min(1000, Math.max(10, Math.ceil(timeoutMs / 10)));
    this.ticksPerTimeout = Math.ceil(timeoutMs / this.tickMs);
  }

  /** Starts a read's deadline; `expire` runs if {@link remove} has not been called in time. */
  add(expire: () => void): ReadDeadline {
    const read: ReadDeadline = { tick: this.ticks, prev: this.tail, next: undefined, linked: true, expire };
    if (this.tail === undefined) this.head = read;
    else this.tail.next = read;
    this.tail = read;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      // A timer is a plain number on some Fetch runtimes (Cloudflare Workers): nothing to unref there.
      this.timer.unref?.();
    }
    return read;
  }

  /** The read ended (or failed): it no longer expires. */
  remove(read: ReadDeadline): void {
    if (!read.linked) return;
    read.linked = false;
    if (read.prev === undefined) this.head = read.next;
    else read.prev.next = read.next;
    if (read.next === undefined) this.tail = read.prev;
    else read.next.prev = read.prev;
    read.prev = undefined;
    read.next = undefined;
  }

  private sweep(): void {
    const now = ++this.ticks;
    // Strictly more ticks than the limit spans: the read started somewhere inside its first tick.
    while (this.head !== undefined && now - this.head.tick > this.ticksPerTimeout) {
      const read = this.head;
      this.remove(read);
      // A throw here would be uncaught in a timer and end the process: the read is dropped anyway.
      try {
        read.expire();
      } catch {}
    }
    if (this.head === undefined && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

const queues = new Map<number, DeadlineQueue>();

/** The shared queue of reads limited to `timeoutMs`. */
export function deadlineQueue(timeoutMs: number): DeadlineQueue {
  let queue = queues.get(timeoutMs);
  if (queue === undefined) {
    queue = new DeadlineQueue(timeoutMs);
    queues.set(timeoutMs, queue);
  }
  return queue;
}
