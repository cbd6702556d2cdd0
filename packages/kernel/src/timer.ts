/**
 * The longest delay a Node.js timer keeps (`setTimeout`, `setInterval`, `AbortSignal.timeout`):
 * 2^31 - 1 ms, about 24.8 days. A longer one fires after 1 ms instead ("TimeoutOverflowWarning").
 *
 * @internal
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Whether `value` is a delay a timer honours: a finite number of milliseconds above 0 and at most
 * {@link MAX_TIMER_MS}. The packages check their time-out options with it at construction: a
 * longer one would time out every call at once.
 *
 * @example isTimerDelay(500) // true
 * @example isTimerDelay(2 ** 31) // false: it would fire after 1 ms
 *
 * @internal
 */
export function isTimerDelay(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value <= MAX_TIMER_MS;
}
