import { connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { FRAMEWORKS, type Framework, type Mounts, serve } from "./conformance.js";
import type { Listening } from "./listen.js";

/** What came back on one raw connection, and when the server closed it. */
export interface RawConversation {
  /** Everything the server sent, latin1. */
  text: string;
  /** The status lines, in order. */
  statuses: number[];
  /** Whether the server closed the connection before the test gave up. */
  closedByServer: boolean;
  /** Milliseconds from the first byte sent to the close (or to giving up). */
  elapsedMs: number;
}

/**
 * Writes `chunks` on one connection (`delayMs` between them, the first at once) and reads until
 * the server closes it or `giveUpMs` pass. Write errors after a close are part of the test.
 */
export function converse(
  url: string,
  chunks: readonly (string | Uint8Array)[],
  options: { delayMs?: number; giveUpMs?: number } = {},
): Promise<RawConversation> {
  const { hostname, port } = new URL(url);
  const { delayMs = 0, giveUpMs = 5000 } = options;
  return new Promise((resolve) => {
    const started = Date.now();
    let text = "";
    let gaveUp = false;
    let pending: NodeJS.Timeout | undefined;
    const socket = connect(Number(port), hostname, () => {
      let i = 0;
      const next = () => {
        if (socket.destroyed || i >= chunks.length) return;
        const chunk = chunks[i++] as string | Uint8Array;
        socket.write(typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk);
        if (delayMs === 0) next();
        else pending = setTimeout(next, delayMs);
      };
      next();
    });
    const timer = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, giveUpMs);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      clearTimeout(pending);
      resolve({
        text,
        statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])),
        closedByServer: !gaveUp,
        elapsedMs: Date.now() - started,
      });
    });
  });
}

/** The head of a request with content: request line, `Host`, `fields`, the blank line. */
export function requestHead(method: string, path: string, fields: Record<string, string>): string {
  const lines = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${method} ${path} HTTP/1.1\r\nHost: x\r\n${lines.join("")}\r\n`;
}

/** The first response's head (up to its blank line), for its fields. */
export function firstHead(text: string): string {
  const end = text.indexOf("\r\n\r\n");
  return end === -1 ? text : text.slice(0, end);
}

/** A request a package refuses before reading its content, with the status it answers. */
export interface RefusedRequest {
  method?: string;
  path: string;
  /** Fields besides `Host` and the framing (`Content-Length` is set by the scenario). */
  fields: Record<string, string>;
  status: number;
}

/**
 * The refused-body policy of `@svc/kernel` (UnreadBodyOptions), through a listening server of
 * each framework in `frameworks`, on raw connections. `mounts` serve the refusals and
 * `after` (`GET /after`, 200, unless given), with `unreadBody` `{ maxBytes: 4096, timeoutMs: 300 }`
 * given to the package where it takes it (the adapters' own writes use the defaults, 64 KiB and
 * 1 s). `large` is refused with a remainder over 64 KiB; `small` with one under 4 KiB.
 */
export function unreadBodyPolicy(
  title: string,
  mounts: Mounts,
  cases: {
    large: RefusedRequest;
    small: RefusedRequest;
    slow?: RefusedRequest;
    /** The request pipelined behind the refusals and what it answers: `GET /after`, 200, by default. */
    after?: { path: string; status: number };
    /**
     * Frameworks that close the connection themselves on this refusal before any @svc code
     * answers it (a Fastify release after 5.0.0 on a content-type parser's error): the small
     * refusal there ends the connection instead of keeping it.
     */
    closedByFramework?: readonly Framework[];
  },
  frameworks: readonly Framework[] = FRAMEWORKS,
): void {
  describe(title, () => {
    for (const framework of frameworks) {
      describe(framework, () => {
        let server: Listening | undefined;
        const url = async () => {
          server ??= await serve(framework, mounts);
          return server.url;
        };
        afterAll(async () => {
          await server?.close();
        });

        const { large, small } = cases;
        const slow = cases.slow ?? small;
        const after = cases.after ?? { path: "/after", status: 200 };
        it(`${large.method ?? "POST"} ${large.path} with 2 MiB of content, then a pipelined GET → ${large.status} with Connection: close, the GET never answered`, async () => {
          const size = 2 * 1024 * 1024;
          const head = requestHead(large.method ?? "POST", large.path, {
            ...large.fields,
            "Content-Length": String(size),
          });
          const got = await converse(await url(), [
            head,
            Buffer.alloc(size, 0x61),
            `GET ${after.path} HTTP/1.1\r\nHost: x\r\n\r\n`,
          ]);
          // One response: the pipelined GET is not answered on a connection that closes.
          expect(got.statuses).toEqual([large.status]);
          expect(firstHead(got.text)).toMatch(/\r\nconnection: close(?:\r\n|$)/i);
          expect(got.closedByServer).toBe(true);
        });

        it(`${slow.method ?? "POST"} ${slow.path} refused, its 1000 bytes dribbled a byte per 50 ms → ${slow.status}, the connection closed within the bound`, async () => {
          const head = requestHead(slow.method ?? "POST", slow.path, {
            ...slow.fields,
            "Content-Length": "1000",
          });
          const got = await converse(await url(), [head, ...Array.from({ length: 1000 }, () => "a")], {
            delayMs: 50,
            giveUpMs: 4000,
          });
          expect(got.statuses[0]).toBe(slow.status);
          // 1 s at most after the refusal (the adapters' default), never the 50 s of the dribble.
          expect(got.closedByServer).toBe(true);
          expect(got.elapsedMs).toBeLessThan(3000);
        });

        it(`${small.method ?? "POST"} ${small.path} with 1000 bytes refused ${small.status}, a GET pipelined behind them → both answered on the kept connection`, async () => {
          const head = requestHead(small.method ?? "POST", small.path, {
            ...small.fields,
            "Content-Length": "1000",
          });
          const got = await converse(
            await url(),
            [`${head}${"a".repeat(1000)}GET ${after.path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`],
            { giveUpMs: 4000 },
          );
          if (cases.closedByFramework?.includes(framework)) {
            expect(got.statuses).toEqual([small.status]);
            expect(firstHead(got.text)).toMatch(/\r\nconnection: close/i);
            return;
          }
          expect(got.statuses).toEqual([small.status, after.status]);
          expect(firstHead(got.text)).not.toMatch(/\r\nconnection: close/i);
        });
      });
    }
  });
}
