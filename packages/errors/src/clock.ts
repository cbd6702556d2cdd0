/**
 * The time of a `now` option (errorHandler's, clientErrorHandler's), or the system clock's when it
 * threw or gave no valid `Date`, with `onFailure` told why. The option is the application's code,
 * run while answering a failed or malformed request: thrown out of an error handler it gives the
 * client the framework's page, or escapes a request or `'clientError'` listener and ends the
 * process. The record's `timestamp` is `toISOString()`, which throws for an invalid Date.
 */
export function clockTime(now: () => Date, onFailure: (failure: unknown) => void): Date {
  try {
    // Date.prototype.getTime throws for anything without a Date's internal time value, and the
    // copy leaves behind a toISOString the returned object may carry of its own.
    const ms: number = Date.prototype.getTime.call(now());
    if (Number.isNaN(ms)) throw new RangeError("now() returned an invalid Date");
    return new Date(ms);
  } catch (failure) {
    onFailure(failure);
    return new Date();
  }
}
