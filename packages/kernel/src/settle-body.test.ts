import { Agent, type IncomingMessage, request } from "node:http";
import type { Socket } from "node:net";
import { express4, type Listening, listen, listenOn } from "@svc/test-utils";
import express from "express";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { expressGate } from "./express.js";
import { fastifyGate } from "./fastify.js";
import type { Gate } from "./gate.js";
import { nodeGate } from "./node.js";

// RFC 9112 §9.3: a refused request whose content is read to its end leaves the connection
// persistent; what settled it must go with the request, not stay on the connection for the next.

const refuse: Gate = () => ({ answer: { status: 401, fields: {}, vary: [], body: undefined } });

/** The server side of each request's connection, and its `close` listeners, as each arrives. */
interface Seen {
  sockets: Set<Socket>;
  listeners: number[];
}

function seeing(): { seen: Seen; note: (req: IncomingMessage) => void } {
  const seen: Seen = { sockets: new Set(), listeners: [] };
  return {
    seen,
    note: (req) => {
      seen.sockets.add(req.socket);
      seen.listeners.push(req.socket.listenerCount("close"));
    },
  };
}

type Serve = (note: (req: IncomingMessage) => void) => Promise<Listening>;

const servers: [string, Serve][] = [
  [
    "node:http",
    (note) => {
      const gate = nodeGate(refuse);
      return listen((req, res) => {
        note(req);
        void gate(req, res);
      });
    },
  ],
  ...(
    [
      ["Express 5", express],
      ["Express 4", express4 as typeof express],
    ] as const
  ).map(([name, make]): [string, Serve] => [
    name,
    (note) => {
      const app = make();
      app.use((req, _res, next) => {
        note(req);
        next();
      });
      app.use(expressGate(refuse));
      return listen(app);
    },
  ]),
  [
    "Fastify",
    async (note) => {
      const app = Fastify();
      app.addHook("onRequest", (request, _reply, done) => {
        note(request.raw);
        done();
      });
      app.addHook("onRequest", fastifyGate(refuse));
      app.post("/", () => "not reached");
      await app.ready();
      return listenOn(app.server);
    },
  ],
];

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
});

/** Sends `count` POSTs of `body`, one after the other, on one kept-alive connection. */
async function postInTurn(url: string, count: number, body: string): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const statuses: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      statuses.push(
        await new Promise<number>((resolve, reject) => {
          const req = request(url, {
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
          });
          req.on("error", reject);
          req.on("response", (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          });
          req.end(body);
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return statuses;
}

describe.each(servers)("%s: refused POSTs on one kept-alive connection", (_name, serve) => {
  it("30 POSTs with 64 unread bytes → 30 × 401 on one connection, its close listeners as after the 2nd", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const { seen, note } = seeing();
      const listening = await serve(note);
      closers.push(listening.close);
      const statuses = await postInTurn(`${listening.url}/`, 30, JSON.stringify({ pad: "x".repeat(52) }));
      expect(statuses).toEqual(Array(30).fill(401));
      expect(seen.sockets.size).toBe(1);
      expect(seen.listeners[29]).toBe(seen.listeners[1]);
      // Node emits the warning on the next turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual(
        [],
      );
    } finally {
      process.off("warning", onWarning);
    }
  });
});
