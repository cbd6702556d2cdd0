import { randomUUID } from "node:crypto";
import * as nodeDiagnostics from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import {
  decisionChannel,
  diagnosticsOver,
  type NodeDiagnostics,
  publishDecision,
  subscribeDiagnostics,
  unsubscribeDiagnostics,
} from "./diagnostics.js";
import { exchangeOf, MAX_RECORDED_DECISIONS } from "./exchange.js";

// The same table over node:diagnostics_channel and over the module's own channels (a runtime
// without that module): a subscriber hears the same messages in the same order on both.
const runtimes = [
  ["node:diagnostics_channel", diagnosticsOver(nodeDiagnostics as unknown as NodeDiagnostics)],
  ["the module's own channels", diagnosticsOver(undefined)],
] as const;

describe.each(runtimes)("diagnostics over %s", (_, dc) => {
  it("a channel without subscribers says so; a subscriber hears each message with the name; unsubscribed, no more", () => {
    const name = `svc:test:${randomUUID()}`;
    const channel = dc.diagnosticChannel<{ decision: string }>(name);
    expect(channel.name).toBe(name);
    expect(channel.hasSubscribers).toBe(false);
    channel.publish({ decision: "unheard" });
    const heard: [unknown, unknown][] = [];
    const listener = (message: unknown, from: string | symbol) => heard.push([message, from]);
    dc.subscribe(name, listener);
    expect(channel.hasSubscribers).toBe(true);
    channel.publish({ decision: "limited" });
    expect(dc.unsubscribe(name, listener)).toBe(true);
    expect(dc.unsubscribe(name, listener)).toBe(false);
    expect(channel.hasSubscribers).toBe(false);
    channel.publish({ decision: "unheard" });
    expect(heard).toEqual([[{ decision: "limited" }, name]]);
  });

  it("a decision channel has no publish; publishDecision delivers its messages to the subscribers", () => {
    const name = `svc:test:${randomUUID()}`;
    type Decision = { decision: "limited"; policy: string } | { decision: "allowed" };
    const channel = dc.decisionChannel<Decision>(name);
    expect(channel.name).toBe(name);
    expect("publish" in channel).toBe(false);
    expect(channel.hasSubscribers).toBe(false);
    publishDecision(channel, { decision: "allowed" });
    const heard: [unknown, unknown][] = [];
    const listener = (message: unknown, from: string | symbol) => heard.push([message, from]);
    dc.subscribe(name, listener);
    expect(channel.hasSubscribers).toBe(true);
    publishDecision(channel, { decision: "limited", policy: "p" });
    dc.unsubscribe(name, listener);
    expect(channel.hasSubscribers).toBe(false);
    expect(heard).toEqual([[{ decision: "limited", policy: "p" }, name]]);
  });

  it("a traced call without subscribers runs as it is, its own promise returned", async () => {
    const traced = dc.tracedCall<{ op: string }>(`svc:test:${randomUUID()}`);
    const call = Promise.resolve(7);
    expect(traced.traced({ op: "get" }, () => call)).toBe(call);
    await expect(call).resolves.toBe(7);
  });

  it.each([
    [
      "settles",
      async (): Promise<number> => 42,
      ["start", "end", "asyncStart", "asyncEnd"],
      { op: "get", result: 42 },
    ],
    [
      "rejects",
      async (): Promise<number> => {
        throw new Error("down");
      },
      ["start", "end", "error", "asyncStart", "asyncEnd"],
      { op: "get", error: new Error("down") },
    ],
  ] as const)(
    "a traced call that %s → its events in order, one context with the outcome",
    async (_, fn, order, context) => {
      const name = `svc:test:${randomUUID()}`;
      const traced = dc.tracedCall<{ op: string }>(name);
      const events: string[] = [];
      const contexts = new Set<unknown>();
      const listeners = ["start", "end", "asyncStart", "asyncEnd", "error"].map((event) => {
        const listener = (message: unknown) => {
          events.push(event);
          contexts.add(message);
        };
        dc.subscribe(`tracing:${name}:${event}`, listener);
        return [`tracing:${name}:${event}`, listener] as const;
      });
      const given = { op: "get" };
      const outcome = await traced.traced(given, fn).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      for (const [channel, listener] of listeners) dc.unsubscribe(channel, listener);
      expect(events).toEqual(order);
      expect([...contexts]).toEqual([given]);
      expect(given).toEqual(context);
      expect(outcome).toEqual("result" in context ? { value: 42 } : { error: new Error("down") });
    },
  );
});

describe("the runtime's channels", () => {
  it("on Node.js they are node:diagnostics_channel's: a subscriber through that module hears a package's message", () => {
    const name = `svc:test:${randomUUID()}`;
    const heard: unknown[] = [];
    const listener = (message: unknown) => heard.push(message);
    nodeDiagnostics.subscribe(name, listener);
    publishDecision(decisionChannel<{ decision: "replayed" }>(name), { decision: "replayed" });
    nodeDiagnostics.unsubscribe(name, listener);
    const other = `svc:test:${randomUUID()}`;
    subscribeDiagnostics(other, listener);
    nodeDiagnostics.channel(other).publish({ decision: "refused" });
    expect(heard).toEqual([{ decision: "replayed" }, { decision: "refused" }]);
  });
});

describe("decision channels", () => {
  it("publishDecision takes a channel of decisionChannel only, not a look-alike", () => {
    const lookalike = { name: `svc:test:${randomUUID()}`, hasSubscribers: true };
    expect(() => publishDecision(lookalike, { decision: "limited" })).toThrow(TypeError);
  });

  it("types: a message of the channel's union only; a union whose decision is no literal is refused", () => {
    type Decision = { request: object; decision: "limited" } | { decision: "recovered"; downMs: number };
    const channel = decisionChannel<Decision>(`svc:test:${randomUUID()}`);
    publishDecision(channel, { decision: "recovered", downMs: 1 });
    // @ts-expect-error: `downMs` belongs to `recovered`, not to `limited`.
    publishDecision(channel, { request: {}, decision: "limited", downMs: 1 });
    // @ts-expect-error: no such decision on the channel.
    publishDecision(channel, { decision: "allowed" });
    // @ts-expect-error: a bare `string` decision cannot be told apart by a subscriber.
    decisionChannel<{ decision: string }>("svc:test:bare");
    decisionChannel<{ decision: "a" } | { decision: "b" | "c" }>("svc:test:literal");
  });
});

describe("the decisions a request's exchange keeps", () => {
  type Decision = { request?: object; decision: "allowed" | "limited" };
  const name = `svc:test:${randomUUID()}`;
  const channel = decisionChannel<Decision>(name);
  const listener = () => {};

  it("each decision published about a request, in order, with its channel; none about no request", () => {
    subscribeDiagnostics(name, listener);
    const request = { headers: {} };
    exchangeOf(request);
    const unseen = { headers: {} };
    publishDecision(channel, { request: unseen, decision: "allowed" });
    publishDecision(channel, { request, decision: "allowed" });
    publishDecision(channel, { decision: "limited" });
    publishDecision(channel, { request: { raw: request }, decision: "limited" });
    unsubscribeDiagnostics(name, listener);
    expect(exchangeOf(request).decisions).toEqual([
      { channel: name, message: { request, decision: "allowed" } },
      { channel: name, message: { request: { raw: request }, decision: "limited" } },
    ]);
    // A request no step has seen is left as given: no exchange is added to it.
    expect(Object.getOwnPropertySymbols(unseen)).toEqual([]);
  });

  it(`at most ${MAX_RECORDED_DECISIONS} a request: the rest are published, not kept`, () => {
    let heard = 0;
    const counting = () => {
      heard++;
    };
    subscribeDiagnostics(name, counting);
    const request = { headers: {} };
    exchangeOf(request);
    for (let i = 0; i < MAX_RECORDED_DECISIONS + 5; i++)
      publishDecision(channel, { request, decision: "allowed" });
    unsubscribeDiagnostics(name, counting);
    expect(heard).toBe(MAX_RECORDED_DECISIONS + 5);
    expect(exchangeOf(request).decisions).toHaveLength(MAX_RECORDED_DECISIONS);
  });
});
