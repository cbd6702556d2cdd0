/**
 * `pending`, or a rejection with `timedOut()` once `ms` have passed, whichever comes first. The
 * timer is cleared as soon as `pending` settles, and keeps no process alive (`unref` where the
 * runtime has it: a timer is a plain number on some Fetch runtimes). What `pending` does after the
 * timeout is dropped: the caller has its answer.
 * @see https://html.spec.whatwg.org/multipage/timers-and-user-prompts.html#dom-settimeout
 *
 * @internal For the stores: a round trip the request waits for is bounded.
 */
export async function withinTime<T>(pending: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
    (timer as { unref?: () => void }).unref?.();
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
    // A late failure after the timeout must not surface as an unhandled rejection.
    pending.catch(() => {});
  }
}
