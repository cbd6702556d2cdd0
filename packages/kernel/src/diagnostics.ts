/**
 * The channels the @svc packages publish their decisions on, and the tracing channels of their
 * store calls, on every runtime: Node.js's `node:diagnostics_channel` where the runtime has it
 * (Node.js, Bun, Deno, workerd with `nodejs_compat`), found with `process.getBuiltinModule` so
 * that the Fetch entries load where there is no Node.js; elsewhere channels of this module with
 * the same names and the same `subscribe`/`publish`/`hasSubscribers`.
 *
 * A package holds a {@link DecisionChannel}, which cannot publish: {@link publishDecision} is the
 * one place a decision is published, so every message is a value of the package's typed union.
 * A package builds a message only when its channel has a subscriber: with none, a decision costs
 * one property read.
 *
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
import { type DecisionMessage, recordDecision } from "./exchange.js";

export type { DecisionMessage };

/** One named channel that can publish anything: what a subscriber's tests stand in for a package with. */
export interface DiagnosticChannel<M extends object> {
  /** The channel's name (`svc:ratelimit`). */
  readonly name: string;
  /** Whether anyone listens: a publisher builds its message only then. */
  readonly hasSubscribers: boolean;
  /** Delivers `message` to every subscriber, synchronously, in the publisher's context. */
  publish(message: M): void;
}

/**
 * The channel a package publishes its decisions on, messages of `D`: its name and whether anyone
 * listens. It has no `publish`: a decision goes out through {@link publishDecision}.
 */
export interface DecisionChannel<D extends DecisionMessage> {
  /** The channel's name (`svc:ratelimit`). */
  readonly name: string;
  /** Whether anyone listens: a package builds its message only then. */
  readonly hasSubscribers: boolean;
  /** Never present: the type of the messages {@link publishDecision} takes on this channel. */
  readonly "~message"?: (message: D) => void;
}

/**
 * `D` when each of its members names its decision with literals; otherwise a type no name is
 * assignable to, so that `decisionChannel` refuses a union a subscriber could not tell apart.
 */
export type LiteralDecisions<D extends DecisionMessage> = string extends D["decision"]
  ? "each member of a decision union names its `decision` with a string literal"
  : string;

/** What a subscriber is called with: the message, and the channel's name. */
export type DiagnosticListener = (message: unknown, name: string | symbol) => void;

/**
 * The tracing channels of one kind of call (a store's command, a key set's fetch): `start`,
 * `end`, `asyncStart`, `asyncEnd` and `error` under `tracing:<name>:<event>`, each given the
 * same `context` object (with `result` or `error` added when the call settles).
 */
export interface TracedCall<C extends object> {
  /** The name the five channels are named after (`svc:ratelimit:store`). */
  readonly name: string;
  /** Runs `call` traced when anyone listens, else just runs it. */
  traced<T>(context: C, call: () => Promise<T>): Promise<T>;
}

/** A `node:diagnostics_channel` channel, as this module uses it. */
export interface NodeChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
  subscribe(listener: DiagnosticListener): void;
  unsubscribe(listener: DiagnosticListener): boolean;
}

/** A `node:diagnostics_channel` tracing channel, as this module uses it. */
export interface NodeTracingChannel {
  readonly hasSubscribers?: boolean;
  tracePromise<T>(fn: () => Promise<T>, context: object): Promise<T>;
}

/** The part of `node:diagnostics_channel` this module uses. */
export interface NodeDiagnostics {
  channel(name: string): NodeChannel;
  tracingChannel(name: string): NodeTracingChannel;
  subscribe(name: string, listener: DiagnosticListener): void;
  unsubscribe(name: string, listener: DiagnosticListener): boolean;
}

function nodeDiagnostics(): NodeDiagnostics | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof runtime?.getBuiltinModule !== "function") return undefined;
  try {
    const dc = runtime.getBuiltinModule("node:diagnostics_channel") as Partial<NodeDiagnostics> | undefined;
    return typeof dc?.channel === "function" &&
      typeof dc.tracingChannel === "function" &&
      typeof dc.subscribe === "function" &&
      typeof dc.unsubscribe === "function"
      ? (dc as NodeDiagnostics)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A channel of this module, where the runtime has none. */
class OwnChannel implements NodeChannel {
  readonly #listeners: DiagnosticListener[] = [];
  constructor(readonly name: string) {}

  get hasSubscribers(): boolean {
    return this.#listeners.length > 0;
  }

  publish(message: unknown): void {
    for (const listener of this.#listeners.slice()) {
      try {
        listener(message, this.name);
      } catch (err) {
        // As node:diagnostics_channel: a subscriber's throw reaches the process, not the publisher.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  subscribe(listener: DiagnosticListener): void {
    this.#listeners.push(listener);
  }

  unsubscribe(listener: DiagnosticListener): boolean {
    const at = this.#listeners.indexOf(listener);
    if (at === -1) return false;
    this.#listeners.splice(at, 1);
    return true;
  }
}

/** The functions over one runtime's channels. */
export interface Diagnostics {
  decisionChannel<D extends DecisionMessage>(name: string & LiteralDecisions<D>): DecisionChannel<D>;
  diagnosticChannel<M extends object>(name: string): DiagnosticChannel<M>;
  tracedCall<C extends object>(name: string): TracedCall<C>;
  subscribe(name: string, listener: DiagnosticListener): void;
  unsubscribe(name: string, listener: DiagnosticListener): boolean;
}

/**
 * The channels over `node` (`node:diagnostics_channel`), or over channels of their own when
 * `undefined`: the module's functions are those of the runtime's; a test runs both.
 */
export function diagnosticsOver(node: NodeDiagnostics | undefined): Diagnostics {
  const own = new Map<string, OwnChannel>();

  function ownChannel(name: string): OwnChannel {
    let channel = own.get(name);
    if (channel === undefined) {
      channel = new OwnChannel(name);
      own.set(name, channel);
    }
    return channel;
  }

  function rawChannel(name: string): NodeChannel {
    return node?.channel(name) ?? ownChannel(name);
  }

  function diagnosticChannel<M extends object>(name: string): DiagnosticChannel<M> {
    const channel = rawChannel(name);
    return {
      name,
      get hasSubscribers() {
        return channel.hasSubscribers;
      },
      publish(message: M) {
        channel.publish(message);
      },
    };
  }

  function decisionChannel<D extends DecisionMessage>(
    name: string & LiteralDecisions<D>,
  ): DecisionChannel<D> {
    return new Decisions<D>(name, rawChannel(name));
  }

  function subscribeDiagnostics(name: string, listener: DiagnosticListener): void {
    if (node !== undefined) node.subscribe(name, listener);
    else ownChannel(name).subscribe(listener);
  }

  function unsubscribeDiagnostics(name: string, listener: DiagnosticListener): boolean {
    return node !== undefined ? node.unsubscribe(name, listener) : ownChannel(name).unsubscribe(listener);
  }

  function tracedCall<C extends object>(name: string): TracedCall<C> {
    const events = ["start", "end", "asyncStart", "asyncEnd", "error"] as const;
    const [start, end, asyncStart, asyncEnd, error] = events.map((event) =>
      rawChannel(`tracing:${name}:${event}`),
    ) as [NodeChannel, NodeChannel, NodeChannel, NodeChannel, NodeChannel];
    const listened = (): boolean =>
      start.hasSubscribers ||
      end.hasSubscribers ||
      asyncStart.hasSubscribers ||
      asyncEnd.hasSubscribers ||
      error.hasSubscribers;
    const tracing = node?.tracingChannel(name);
    return {
      name,
      traced<T>(context: C, call: () => Promise<T>): Promise<T> {
        if (!listened()) return call();
        if (tracing !== undefined) return tracing.tracePromise(call, context);
        return ownTrace(context as C & { result?: unknown; error?: unknown }, call, {
          start,
          end,
          asyncStart,
          asyncEnd,
          error,
        });
      },
    };
  }

  return {
    decisionChannel,
    diagnosticChannel,
    tracedCall,
    subscribe: subscribeDiagnostics,
    unsubscribe: unsubscribeDiagnostics,
  };
}

/** A decision channel: the runtime's channel, which only {@link publishDecision} reaches. */
class Decisions<D extends DecisionMessage> implements DecisionChannel<D> {
  readonly #channel: NodeChannel;

  constructor(
    readonly name: string,
    channel: NodeChannel,
  ) {
    this.#channel = channel;
  }

  get hasSubscribers(): boolean {
    return this.#channel.hasSubscribers;
  }

  static publish<D extends DecisionMessage>(channel: DecisionChannel<D>, message: D): void {
    if (!(#channel in channel))
      throw new TypeError(`${String(channel.name)} is no channel of decisionChannel`);
    recordDecision(channel.name, message);
    (channel as Decisions<D>).#channel.publish(message);
  }
}

const runtimeDiagnostics = diagnosticsOver(nodeDiagnostics());

/**
 * The decision channel named `name`: `node:diagnostics_channel`'s where the runtime has it (so a
 * subscriber through that module hears it), else this module's. `D` is the package's union of
 * messages, each member naming its `decision` with literals.
 *
 * @example
 * const decisions = decisionChannel<RateLimitDiagnostic>("svc:ratelimit");
 * if (decisions.hasSubscribers) publishDecision(decisions, { request, decision: "limited", ... });
 * @internal For the @svc packages, through `@svc/kernel/internal`.
 */
export const decisionChannel: Diagnostics["decisionChannel"] = runtimeDiagnostics.decisionChannel;

/**
 * Publishes `message` on `channel`, to every subscriber, synchronously: the one place a decision
 * is published. The request's exchange keeps it too (`exchangeOf(request).decisions`), so what
 * reads every decision of a request at its end needs no subscriber of its own. Build `message`
 * only when `channel.hasSubscribers`; without one, publishing it does nothing.
 *
 * @example
 * if (decisions.hasSubscribers) publishDecision(decisions, { request, decision: "replayed", scope });
 * @internal For the @svc packages, through `@svc/kernel/internal`.
 */
export function publishDecision<D extends DecisionMessage>(
  channel: DecisionChannel<D>,
  message: NoInfer<D>,
): void {
  Decisions.publish(channel, message);
}

/**
 * The tracing channels named after `name`: `node:diagnostics_channel`'s `tracingChannel` where
 * the runtime has it, else the same five channels of this module, published in the same order.
 *
 * @example
 * const commands = tracedCall<{ command: string }>("svc:ratelimit:store");
 * const reply = await commands.traced({ command: "EVALSHA" }, () => client.evalSha(sha, args));
 * @internal For the @svc packages, through `@svc/kernel/internal`.
 */
export const tracedCall: Diagnostics["tracedCall"] = runtimeDiagnostics.tracedCall;

/**
 * Listens to the channel named `name` on every runtime (on Node.js the same as
 * `diagnostics_channel.subscribe`).
 *
 * @example subscribeDiagnostics("svc:ratelimit", (message) => console.log(message));
 */
export const subscribeDiagnostics: Diagnostics["subscribe"] = runtimeDiagnostics.subscribe;

/**
 * Stops `listener` listening to the channel named `name`; `false` when it was not.
 *
 * @example unsubscribeDiagnostics("svc:ratelimit", listener);
 */
export const unsubscribeDiagnostics: Diagnostics["unsubscribe"] = runtimeDiagnostics.unsubscribe;

/** `tracePromise` as node:diagnostics_channel publishes it, for a runtime without that module. */
async function ownTrace<T>(
  context: { result?: unknown; error?: unknown },
  call: () => Promise<T>,
  channels: Record<"start" | "end" | "asyncStart" | "asyncEnd" | "error", NodeChannel>,
): Promise<T> {
  channels.start.publish(context);
  let pending: Promise<T>;
  try {
    pending = call();
  } catch (err) {
    context.error = err;
    channels.error.publish(context);
    channels.end.publish(context);
    throw err;
  }
  channels.end.publish(context);
  try {
    const result = await pending;
    context.result = result;
    channels.asyncStart.publish(context);
    channels.asyncEnd.publish(context);
    return result;
  } catch (err) {
    context.error = err;
    channels.error.publish(context);
    channels.asyncStart.publish(context);
    channels.asyncEnd.publish(context);
    throw err;
  }
}
