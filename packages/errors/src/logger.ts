/**
 * The one logger shape every `@svc` package accepts: the pino-compatible subset the packages
 * call, `level(obj, msg)`. A pino logger (or a pino-http `req.log`) is one; so is `console`-free
 * {@link fallbackLogger}. A package option asks only for the methods it calls
 * (`Pick<Logger, "warn">`), so a logger with just those methods is accepted.
 *
 * @example
 * import pino from "pino";
 * const logger: Logger = pino();
 * app.use(errorHandler({ logger }));
 * @see https://getpino.io/#/docs/api?id=logger
 */
export interface Logger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

/** An `Error` as {@link serializeError} writes it: what a log reader needs to find the cause. */
export interface SerializedError {
  /** The error's `name` (pino's `type`). */
  type: string;
  message: string;
  stack?: string;
  /** Other own enumerable properties with a primitive value (`code`, `errno`, `syscall`, `address`, `url`, ...). */
  [property: string]: unknown;
}

/** How many `cause` links (and `AggregateError` members) are followed before the chain is cut. */
export const DEFAULT_CAUSE_DEPTH = 8;
const MAX_AGGREGATE_ERRORS = 10;
const MAX_EXTRA_PROPERTIES = 20;
const MAX_STRING = 8_192;
const OWN_KEYS = new Set(["name", "message", "stack", "cause", "errors"]);

/**
 * Turns an error into a plain, JSON-safe object that keeps its `cause` chain (ES2022
 * `Error.prototype.cause`): name, message, stack, primitive own properties such as Node's
 * `code`/`syscall`/`address`, then `cause`, recursively. Non-`Error` causes are kept as values.
 * The chain is bounded: after `depth` links the cause becomes `"[cause chain truncated]"`, and an
 * error met twice (a cycle) becomes `"[Circular]"`, so a hostile or looping chain cannot grow a
 * log line without bound. A member whose getter (or Proxy trap) throws is written
 * `"[unserializable]"`, and the rest of the error and its chain are kept.
 *
 * @example
 * serializeError(new Error("JWKS fetch failed", { cause: new TypeError("fetch failed") }));
 * // { type: "Error", message: "JWKS fetch failed", stack: "…", cause: { type: "TypeError", … } }
 * @see https://tc39.es/ecma262/#sec-installerrorcause
 */
export function serializeError(value: unknown, depth: number = DEFAULT_CAUSE_DEPTH): unknown {
  return serialize(value, Math.max(0, Math.floor(depth)), new Set());
}

function serialize(value: unknown, depth: number, seen: Set<object>): unknown {
  if (!(value instanceof Error)) return jsonSafe(value, seen);
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  // Reading an error runs its code: a getter or Proxy trap that throws (on `cause`, `message`, an
  // own property) costs that one member, not the whole error nor the rest of its chain.
  const out: SerializedError = {
    type: readable(() => String(value.name)),
    message: readable(() => clip(String(value.message))),
  };
  const stack = readable(() => value.stack);
  if (typeof stack === "string") out.stack = stack === UNREADABLE ? stack : clipStack(stack);
  let extra = 0;
  for (const key of readable(() => Object.keys(value), [])) {
    if (OWN_KEYS.has(key) || extra >= MAX_EXTRA_PROPERTIES) continue;
    const v = readable(() => (value as unknown as Record<string, unknown>)[key]);
    if (typeof v === "string") out[key] = clip(v);
    else if (typeof v === "number" || typeof v === "boolean") out[key] = v;
    else if (typeof v === "bigint") out[key] = v.toString();
    else continue;
    extra++;
  }
  if (value instanceof AggregateError) {
    const errors = readable(() => value.errors);
    if (Array.isArray(errors)) {
      out.errors =
        depth === 0
          ? "[cause chain truncated]"
          : readable(() =>
              errors.slice(0, MAX_AGGREGATE_ERRORS).map((e: unknown) => serialize(e, depth - 1, seen)),
            );
    } else if (errors === UNREADABLE) out.errors = errors;
  }
  const cause = readable(() => ("cause" in value ? value.cause : undefined));
  if (cause !== undefined) {
    out.cause = depth === 0 ? "[cause chain truncated]" : readable(() => serialize(cause, depth - 1, seen));
  }
  seen.delete(value);
  return out;
}

const UNREADABLE = "[unserializable]";

/** The value `read` returns, or `fallback` when reading it throws. */
function readable<T>(read: () => T): T | typeof UNREADABLE;
function readable<T>(read: () => T, fallback: T): T;
function readable<T>(read: () => T, fallback: T | typeof UNREADABLE = UNREADABLE): T | typeof UNREADABLE {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** A value JSON.stringify can write: primitives kept, objects copied if serialisable, else their tag. */
function jsonSafe(value: unknown, seen: Set<object>): unknown {
  switch (typeof value) {
    case "string":
      return clip(value);
    case "number":
    case "boolean":
    case "undefined":
      return value;
    case "bigint":
      return value.toString();
    case "symbol":
    case "function":
      return String(value);
    default:
      if (value === null) return null;
      if (seen.has(value as object)) return "[Circular]";
      try {
        const text = JSON.stringify(value);
        return text === undefined ? Object.prototype.toString.call(value) : JSON.parse(clip(text, true));
      } catch {
        return Object.prototype.toString.call(value);
      }
  }
}

function clip(text: string, json = false): string {
  if (text.length <= MAX_STRING) return text;
  // A clipped JSON text would not parse back: say what it was instead.
  return json ? JSON.stringify(`${text.slice(0, MAX_STRING)}…`) : `${text.slice(0, MAX_STRING)}…`;
}

/**
 * A stack with its head (V8 writes `Name: message` there, the message in full) and its frames each
 * clipped: a huge message must not reach the log through the stack after being clipped as the
 * message, and the frames, which say where it was thrown, are kept.
 */
function clipStack(stack: string): string {
  if (stack.length <= MAX_STRING) return stack;
  const at = stack.indexOf("\n    at ");
  return at === -1 ? clip(stack) : `${clip(stack.slice(0, at))}${clip(stack.slice(at))}`;
}

/** pino's numeric levels, so the fallback's lines sort and filter with the app's own. */
const LEVELS = { error: 50, warn: 40, info: 30, debug: 20 } as const;

function writeLine(level: number, obj: object, msg: string | undefined): void {
  const line: Record<string, unknown> = { level, time: Date.now(), msg };
  const seen = new Set<object>();
  for (const [key, value] of Object.entries(obj)) {
    if (key === "level" || key === "time" || key === "msg") continue;
    // A thrown value's getters and Proxy traps run here; one that throws costs its own field,
    // never the line (nor the error response being written after it).
    try {
      line[key] =
        value instanceof Error ? serialize(value, DEFAULT_CAUSE_DEPTH, seen) : jsonSafe(value, seen);
    } catch {
      line[key] = "[unserializable]";
    }
  }
  const stderr = (globalThis as { process?: { stderr?: { write?: (text: string) => unknown } } }).process
    ?.stderr;
  // Node.js's stderr, one JSON line; the console where there is no process (workerd, browsers).
  if (typeof stderr?.write === "function") stderr.write(`${JSON.stringify(line)}\n`);
  else console.error(JSON.stringify(line));
}

/**
 * The logger a package falls back to when it is given none and the request carries no
 * pino-http `req.log`: one JSON line per call on stderr, in pino's shape (`level`, `time`, `msg`,
 * then the fields), with every `Error` field written by {@link serializeError} so that its
 * `cause` chain (the URL or socket error behind "The JSON Web Key Set could not be fetched")
 * reaches the log.
 *
 * @example
 * fallbackLogger.warn({ err }, "rate limit store unavailable");
 * // {"level":40,"time":…,"msg":"rate limit store unavailable","err":{"type":"Error",…,"cause":{…}}}
 * @see https://getpino.io/#/docs/api?id=logger
 */
export const fallbackLogger: Required<Logger> = {
  error: (obj, msg) => writeLine(LEVELS.error, obj, msg),
  warn: (obj, msg) => writeLine(LEVELS.warn, obj, msg),
  info: (obj, msg) => writeLine(LEVELS.info, obj, msg),
  debug: (obj, msg) => writeLine(LEVELS.debug, obj, msg),
};

/**
 * Writes `entry` through a handler's logger (`errorHandler`'s, `clientErrorHandler`'s). The
 * response must go out whatever the log does: a logger (or its serializer, reading a hostile
 * thrown value's getters) that throws would leave the client with the framework's page, stack
 * trace included outside production (RFC 9457 §6), or escape a `'clientError'` listener and end
 * the process. The line goes to stderr instead. Internal: not exported from the package entry.
 */
export function writeLog(logger: Pick<Logger, "error">, entry: Record<string, unknown>, msg: string): void {
  try {
    logger.error(entry, msg);
  } catch {
    if (logger === fallbackLogger) return;
    try {
      fallbackLogger.error(entry, msg);
    } catch {
      // stderr itself refused the line: nothing is left to tell, and the response still goes out.
    }
  }
}

/**
 * Writes an `info` line through `logger` when it has `info` (the line of a 4xx): never on stderr,
 * and a logger that throws costs the line, never the response. Internal.
 */
export function writeInfo(
  logger: Partial<Pick<Logger, "info">> | undefined,
  entry: Record<string, unknown>,
  msg: string,
): void {
  if (logger === undefined || logger === fallbackLogger || typeof logger.info !== "function") return;
  try {
    logger.info(entry, msg);
  } catch {
    // The line is lost; the response still goes out.
  }
}
