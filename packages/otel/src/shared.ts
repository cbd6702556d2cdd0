import type { Attributes, Span } from "@opentelemetry/api";

/** The instrumentation scope's name, as the meter and the tracer are named. */
export const SCOPE_NAME = "@svc/otel";

/** The value of an attribute outside its set, as the semantic conventions spell it for `error.type`. */
export const OTHER = "_OTHER";

/** `error.type` of a thrown value: its class name, as the conventions recommend. */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name === "Error" ? error.constructor.name : error.name;
  return OTHER;
}

/**
 * The spans a decision has set `error.type` on, and whether that decision refused the request.
 * The span's `error.type` tells why its request failed: the first refusal's reason, else the first
 * value a decision gave; the server span's own (its 5xx status) only when no decision gave one.
 */
const errorTypes = new WeakMap<Span, boolean>();

/**
 * `attributes` of a decision as they go on `span`: without `error.type` when the span keeps the
 * one an earlier decision set (a refusal's, or any when this decision does not refuse).
 */
export function spanAttributes(span: Span, attributes: Attributes, refusal: boolean): Attributes {
  if (attributes["error.type"] === undefined) return attributes;
  const held = errorTypes.get(span);
  if (held === undefined || (refusal && !held)) {
    errorTypes.set(span, refusal);
    return attributes;
  }
  const { "error.type": _kept, ...rest } = attributes;
  return rest;
}

/** Whether a decision has set `error.type` on `span`. */
export function hasErrorType(span: Span): boolean {
  return errorTypes.has(span);
}
