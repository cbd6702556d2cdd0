import { connect } from "node:net";
import { FRAMEWORKS, serve } from "@svc/test-utils/conformance";
import { describe, expect, it } from "vitest";
import { envelope, getCustomer } from "./helpers.js";
import { PATH, soapMounts } from "./mounts.js";

/**
 * Sends the header section and half of a body, then nothing: what comes back, as raw text, once
 * the server closes the connection or after `waitMs`.
 */
function trickle(url: string, waitMs: number): Promise<{ text: string; ms: number }> {
  const { hostname, port } = new URL(url);
  const body = Buffer.from(envelope(getCustomer("42")));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    const done = () => resolve({ text, ms: Date.now() - started });
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, waitMs);
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
    });
    socket.on("close", () => {
      clearTimeout(timer);
      done();
    });
    socket.on("error", reject);
    socket.write(
      `POST ${PATH} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/soap+xml; charset=utf-8\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    );
    socket.write(body.subarray(0, body.byteLength >> 1));
  });
}

describe("a body that stops arriving → 408 fault with Connection: close (bodyTimeoutMs)", () => {
  for (const framework of FRAMEWORKS) {
    it(`on ${framework}`, async () => {
      const server = await serve(framework, soapMounts({ bodyTimeoutMs: 200 }));
      try {
        const { text, ms } = await trickle(server.url, 3000);
        expect(text).toMatch(/^HTTP\/1\.1 408 /);
        expect(text).toMatch(/\r\nconnection: close\r\n/i);
        expect(text).toMatch(/env:Sender/);
        expect(ms).toBeLessThan(2000);
      } finally {
        await server.close();
      }
    });
  }
});
