import type { IncomingMessage, ServerResponse } from "node:http";
import { pinoRedaction } from "@svc/auth";
import { requestState } from "@svc/kernel";
import type { Express, NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { Telemetry } from "./telemetry.js";

const CHILD = Symbol("request logger");
const LAZY = Symbol("request logger stand-in");
const START = Symbol("request start");

type Tracked = IncomingMessage & {
  [CHILD]?: Logger;
  [LAZY]?: Logger;
  [START]?: number;
  originalUrl?: string;
};

type LogArgs = Parameters<Logger["info"]>;

/**
 * The request's logger as handed out: every pino method a handler calls goes to the request's
 * child logger, made on first use. A line at a level its parent has off is dropped without making
 * the child: a pino child takes its parent's level when made, so it would drop the line too
 * (unless given a level of its own, when the child decides).
 */
class LazyRequestLogger {
  readonly #made: () => Logger;
  /** The logger whose level the child would take; `undefined` when the child has its own. */
  readonly #levels: Pick<Logger, "isLevelEnabled"> | undefined;
  #child: Logger | undefined;
  constructor(made: () => Logger, levels: Pick<Logger, "isLevelEnabled"> | undefined) {
    this.#made = made;
    this.#levels = levels;
  }
  #make(): Logger {
    this.#child ??= this.#made();
    return this.#child;
  }
  /** Whether a line at `level` would be dropped, decided without making the child when it can be. */
  #off(level: string): boolean {
    return this.#child === undefined && this.#levels !== undefined && !this.#levels.isLevelEnabled(level);
  }
  get level(): string {
    return this.#make().level;
  }
  isLevelEnabled(level: string): boolean {
    return this.#make().isLevelEnabled(level);
  }
  child(bindings: Record<string, unknown>): Logger {
    return this.#make().child(bindings) as Logger;
  }
  fatal(...args: LogArgs): void {
    if (!this.#off("fatal")) this.#make().fatal(...args);
  }
  error(...args: LogArgs): void {
    if (!this.#off("error")) this.#make().error(...args);
  }
  warn(...args: LogArgs): void {
    if (!this.#off("warn")) this.#make().warn(...args);
  }
  info(...args: LogArgs): void {
    if (!this.#off("info")) this.#make().info(...args);
  }
  debug(...args: LogArgs): void {
    if (!this.#off("debug")) this.#make().debug(...args);
  }
  trace(...args: LogArgs): void {
    if (!this.#off("trace")) this.#make().trace(...args);
  }
  silent(): void {}
}

/**
 * A logger that makes `made()`'s logger on its first line (or level read, or child), not before:
 * for a request's logger, which most requests never write to. Fastify's `childLoggerFactory`
 * returns one, as `req.log` is one on Express. `levels`, the logger `made()` makes a child of
 * without a level of its own, drops a line at a level it has off without making the child.
 *
 * @example Fastify({ childLoggerFactory: (logger, bindings, options) => lazyLogger(() => logger.child(bindings, options), logger) })
 */
export function lazyLogger<L extends object>(made: () => L, levels?: Pick<Logger, "isLevelEnabled">): L {
  return new LazyRequestLogger(made as unknown as () => Logger, levels) as unknown as L;
}

/**
 * The access line's redaction: the preset's top-level paths (`url`, `access_token`, `password`),
 * censored the same way. The line is flat (strings and numbers, see `onClose`; a test pins its
 * fields), so the preset's nested and wildcard paths can match nothing in it; checking them cost
 * about 1.5 µs a line, some 40 % of it. Every other line keeps the whole preset.
 */
const ACCESS_LINE_REDACTION = {
  paths: pinoRedaction.paths.filter((path) => /^\w+$/.test(path)),
  censor: pinoRedaction.censor,
};

/**
 * The most characters of a request target a log line carries (then `…`), and of its `User-Agent`:
 * a client decides both, up to Node's 16 KB header limit, and each request's line must stay
 * small whatever it sends (one 8,000-digit `/v…` prefix made each line 8 KB).
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Logging_Cheat_Sheet.html
 */
export const MAX_LOGGED_URL = 1024;
const MAX_LOGGED_AGENT = 256;

/** `text` cut to `max` characters, `…` marking the cut; `undefined` stays so. */
export function clipped(text: string | undefined, max: number): string | undefined {
  return text === undefined || text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** What a log line says about the request. `url` and the headers pass through the logger's redaction. */
function requestSummary(req: Tracked) {
  return {
    method: req.method,
    url: clipped(req.originalUrl ?? req.url, MAX_LOGGED_URL),
    headers: req.headers,
    remoteAddress: req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * The access log: one flat JSON line per request when its response is finished (or the client
 * went away), at `info`, or `error` for a 5xx: `correlationId`, `method`, `url`, `statusCode`,
 * `responseTime` (ms), `remoteAddress`, `userAgent`, `principal` (the authenticated caller's id)
 * and, with telemetry on, `decisions`: what the packages decided on the request, in order
 * (`ratelimit:allowed auth:refused:expired`) and `traceId`, the W3C trace the request's server
 * span belongs to (the caller's, when it sent a `traceparent`). A credential in the URL (`access_token=`) is
 * censored by the logger's redaction (`pinoRedaction` from @svc/auth); request headers are not
 * part of the line. The URL is cut at 1,024 characters and the user agent at 256, so a line stays
 * small whatever the client sends. It is the only line of a 4xx: the error record logs 5xx only
 * ({@link faultLogger}).
 *
 * `req.log` / `res.log` are the request's own logger (for handlers and error handlers), a child
 * carrying the correlation id and the request with its headers (credentials censored by the same
 * redaction); it is only made when a handler writes to it, so a request that logs nothing else
 * costs one line and no child logger.
 *
 * @example
 * app.use(accessLog(app, logger, (res) => res.locals.correlationId));
 */
export function accessLog(
  app: Express,
  logger: Logger,
  correlationIdOf: (res: Response) => string,
  telemetry?: Pick<Telemetry, "decisionsOf" | "traceOf"> | undefined,
) {
  const childOf = (req: Tracked, res: Response): Logger => {
    let child = req[CHILD];
    if (child === undefined) {
      const id = correlationIdOf(res);
      child = logger.child({ reqId: id, correlationId: id, req: requestSummary(req) });
      req[CHILD] = child;
    }
    return child;
  };
  // Libraries take `req.log` on every request to have it at hand (the SOAP endpoint passes it to
  // each call), mostly never to write to it: they get a stand-in that makes the child logger (the
  // request's headers through the redaction) on its first line, not on the property read.
  const lazyOf = (req: Tracked, res: Response): Logger => {
    let lazy = req[LAZY];
    if (lazy === undefined) {
      lazy = lazyLogger(() => childOf(req, res), logger);
      req[LAZY] = lazy;
    }
    return lazy;
  };
  // On the app's request and response prototypes: nothing to set per request.
  Object.defineProperty(app.request, "log", {
    configurable: true,
    get(this: Request) {
      return lazyOf(this as Tracked, this.res as Response);
    },
  });
  Object.defineProperty(app.response, "log", {
    configurable: true,
    get(this: Response) {
      return lazyOf(this.req as Tracked, this);
    },
  });

  const start = accessLines(logger, (res) => correlationIdOf(res as Response), telemetry);
  return function accessLogMiddleware(req: Request, res: Response, next: NextFunction): void {
    start(req, res);
    next();
  };
}

/**
 * The access log's lines without a framework: `start(req, res)` when a request comes in writes
 * its line when its response is finished (or the client went away), as {@link accessLog} does;
 * `correlationIdOf` reads the request's correlation id from the response.
 *
 * @example const start = accessLines(logger, (res) => res.getHeader("x-correlation-id") as string);
 */
export function accessLines(
  logger: Logger,
  correlationIdOf: (res: ServerResponse) => string,
  telemetry?: Pick<Telemetry, "decisionsOf" | "traceOf"> | undefined,
): (req: IncomingMessage, res: ServerResponse) => void {
  const lines = logger.child({}, { redact: ACCESS_LINE_REDACTION });
  return function startAccessLine(req, res) {
    (req as Tracked)[START] = performance.now();
    // ServerResponse emits "close" once, after "finish" or when the connection went away first
    // (so `on`, which needs no wrapper per request, is enough).
    res.on("close", onClose);
  };

  function onClose(this: ServerResponse): void {
    const req = this.req as Tracked;
    const failed = this.statusCode >= 500;
    const completed = this.writableFinished && !req.readableAborted;
    // Flat on purpose: every nested object costs a pass of the logger's redaction paths.
    lines[failed ? "error" : "info"](
      {
        correlationId: correlationIdOf(this),
        method: req.method,
        url: clipped(req.originalUrl ?? req.url, MAX_LOGGED_URL),
        statusCode: this.statusCode,
        responseTime: Math.round(performance.now() - (req[START] ?? 0)),
        remoteAddress: req.socket?.remoteAddress,
        userAgent: clipped(req.headers["user-agent"], MAX_LOGGED_AGENT),
        principal: requestState(req).principal?.id,
        decisions: telemetry?.decisionsOf(req),
        traceId: telemetry?.traceOf(req),
      },
      failed ? "request errored" : completed ? "request completed" : "request aborted",
    );
  }
}

/**
 * The error record's logger (`errorHandler`'s `logger` option on either framework): the line of
 * each 5xx, with the exception and its stack, and nothing for a 4xx. A 4xx is the client's, said
 * once in its access line; the record's own `info` line said it again, with a stack and the
 * client's message. Its `path` is cut as the access line's URL is.
 *
 * @example errorHandler({ logger: faultLogger(logger) })
 */
export function faultLogger(logger: Logger): { error(obj: object, msg?: string): void } {
  return {
    error(obj, msg) {
      const path = (obj as { path?: unknown }).path;
      const entry =
        typeof path === "string" && path.length > MAX_LOGGED_URL
          ? { ...obj, path: clipped(path, MAX_LOGGED_URL) }
          : obj;
      logger.error(entry, msg);
    },
  };
}
