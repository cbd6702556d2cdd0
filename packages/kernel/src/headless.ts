/**
 * The middleware known to write no response head of its own: it sets fields, answers only through
 * `writeResponse` of `@svc/kernel/node` (which sets the `Vary` names held for the request with the
 * answer's own), or passes the request on with `next`. A function, not a request or response
 * property: the mark is taken once, when a `chain` is made.
 */
const headless = new WeakSet<object>();

/**
 * Marks `middleware` as one that writes no response head itself (see above), so that a `chain`
 * may hold the `Vary` names it adds and set them once with those of its neighbours.
 *
 * @internal For the @svc packages' Express middleware.
 */
export function headlessMiddleware<F extends (...args: never[]) => unknown>(middleware: F): F {
  headless.add(middleware);
  return middleware;
}

/** Whether `middleware` was marked by {@link headlessMiddleware}. @internal */
export function isHeadlessMiddleware(middleware: unknown): boolean {
  return typeof middleware === "function" && headless.has(middleware);
}
