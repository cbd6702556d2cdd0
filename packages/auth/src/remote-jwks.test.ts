import { createServer, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { type Listening, listenOn } from "@svc/test-utils";
import type { JSONWebKeySet } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../test/helpers.js";
import { authenticate } from "./express.js";
import { createTokenIssuer } from "./token-issuer.js";

const ISS = "https://issuer.test/";
const AUD = "https://api.test/";
const issuer = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });

/** Well past what the socket buffers on both sides hold, so an unread body keeps its connection busy. */
const LARGE = 1024 * 1024;
const MAX_BYTES = 64 * 1024;

type Answer =
  | "500"
  | "503"
  | "302"
  | "200 over maxBytes (Content-Length)"
  | "200 over maxBytes (chunked)"
  | "200";

const opened: Listening[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

/**
 * A key server on node:http answering every download with `answer`, which counts the connections
 * made to it and keeps, per response, a promise of its end (the body sent, or the socket closed
 * under it).
 */
async function keyServer(answer: Answer, keys: JSONWebKeySet) {
  const state = { connections: 0, open: new Set<Socket>(), ended: [] as Promise<void>[] };
  const server = createServer((_req, res) => {
    state.ended.push(endOf(res));
    const filler = "x".repeat(LARGE);
    if (answer === "200") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(keys));
    } else if (answer === "302") {
      res.writeHead(302, { location: "/elsewhere", "content-type": "text/html" }).end(filler);
    } else if (answer === "200 over maxBytes (Content-Length)") {
      res.writeHead(200, { "content-type": "application/json" }).end(filler);
    } else if (answer === "200 over maxBytes (chunked)") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(filler.slice(0, LARGE / 2));
      res.end(filler.slice(LARGE / 2));
    } else {
      res.writeHead(Number(answer), { "content-type": "text/html" }).end(filler);
    }
  });
  server.on("connection", (socket: Socket) => {
    state.connections++;
    state.open.add(socket);
    socket.on("close", () => state.open.delete(socket));
  });
  const l = await listenOn(server);
  opened.push(l);
  return { url: `${l.url}/jwks.json`, state };
}

function endOf(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.on("close", () => resolve()));
}

describe("remote JWKS: a download that is not used is cancelled, not left unread", () => {
  it.each<[Answer, number]>([
    ["500", 503],
    ["503", 503],
    ["302", 503],
    ["200 over maxBytes (Content-Length)", 503],
    ["200 over maxBytes (chunked)", 503],
    ["200", 200],
  ])(
    "key server answering %s (large body) → %i; every download's body read or cancelled, no connection left busy",
    async (answer, status) => {
      const keys = await keyServer(answer, await issuer.jwks());
      // Every Response the verifier's downloads got, as undici handed them over.
      const realFetch = globalThis.fetch;
      const downloads: Response[] = [];
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
        const response = await realFetch(input, init);
        if (String(input) === keys.url) downloads.push(response);
        return response;
      });
      // The verifier's clock is moved past each failure cool-down: no test waits for one.
      let shift = 0;
      const server = await listenOn(
        createServer(
          app(
            authenticate({
              realm: "api",
              bearer: {
                jwksUri: keys.url,
                allowHttp: true,
                onWarning: () => {},
                jwksOptions: { failureCooldownDuration: 1000, maxBytes: MAX_BYTES },
                algorithms: ["ES256"],
                issuer: ISS,
                audience: AUD,
                cache: false,
                now: () => Date.now() + shift,
              },
            }),
          ),
        ),
      );
      opened.push(server);

      const rounds = answer === "200" ? 1 : 4;
      for (let i = 0; i < rounds; i++) {
        const token = (await issuer.issue({ id: `u${i}` })).access_token;
        const res = await realFetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(status);
        if (status === 503) expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
        await res.arrayBuffer();
        shift += 1001;
      }
      expect(downloads).toHaveLength(rounds);
      // Read to the end (the key set) or cancelled (anything else): an unread body holds its
      // connection until the garbage collector happens to free it.
      for (const response of downloads) expect(response.bodyUsed).toBe(true);
      // The key server sees each response end (sent, or its socket closed by the cancel), and no
      // connection is left open with a response stuck behind it.
      await Promise.all(keys.state.ended);
      expect(keys.state.ended).toHaveLength(rounds);
      const busy = [...keys.state.open].filter((socket) => socket.writableLength > 0);
      expect(busy).toEqual([]);
    },
  );
});
