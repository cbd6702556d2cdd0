/**
 * Writes `value`, what a request's exchange records (its principal, version, rate limit), on the
 * framework's own request as the property `name`: the compatibility options of the adapters for
 * applications written against 0.1 and 0.2 (`requestProperties` of the kernel's Express adapter,
 * `requestProperty` of `@svc/auth`, `requestPropertyName` of `@svc/ratelimit`). Only adapters
 * call it: the cores record their decisions in the exchange and never touch a framework's request.
 *
 * `undefined` (nothing recorded) removes a value an earlier step left on the request, or, given
 * `empty` (`null`, for a property the framework declares, as Fastify's `decorateRequest` does),
 * writes that instead, so the request's shape stays as declared.
 *
 * @example writeRequestProperty(req, "principal", requestState(req).principal);
 *
 * @internal
 */
export function writeRequestProperty(target: object, name: string, value: unknown, empty?: null): void {
  const bag = target as Record<string, unknown>;
  if (value !== undefined) bag[name] = value;
  else if (empty === null) bag[name] = null;
  // Only one left by an earlier step: `delete` of an absent property still costs a lookup.
  else if (bag[name] !== undefined) delete bag[name];
}
