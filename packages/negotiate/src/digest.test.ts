import { createHash } from "node:crypto";
import { reply } from "@svc/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, inMemory, onExpress, type Route } from "../test/core.js";
import { compression } from "./coder.js";
import { representations } from "./representer.js";

const body = `${"integrity matters ".repeat(300)}\n`;
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("base64");

// RFC 9530: a digest of the bytes the handler sends, as an app signing its responses sets it.
const routes: Record<string, Route> = {};
for (const field of ["Content-Digest", "Repr-Digest"]) {
  routes[`/${field.toLowerCase()}`] = () =>
    reply.bytes(body, "text/plain", { headers: { [field]: `sha-256=:${sha256(body)}:` } });
}
routes["/digest"] = () => reply.bytes(body, "text/plain", { headers: { Digest: `SHA-256=${sha256(body)}` } });
const steps = { representations: representations(), coding: compression() };

let server: Awaited<ReturnType<typeof onExpress>>;
beforeAll(async () => {
  server = await onExpress(steps, routes);
});
afterAll(() => server.close());

async function raw(
  client: Client,
  method: string,
  path: string,
): Promise<{ headers: Record<string, unknown>; bytes: Buffer }> {
  const res = await client(path, { method, headers: { "accept-encoding": "gzip" } });
  return { headers: Object.fromEntries(res.headers), bytes: Buffer.from(await res.arrayBuffer()) };
}

const clients: [string, () => Client][] = [
  ["in memory", () => inMemory(steps, routes)],
  // fetch decodes a coded body itself: the Express client reads the bytes as sent.
  ["Express", () => (path, init) => server.raw(path, init)],
];

describe.each(clients)("%s", (_via, client) => {
  describe("a response carrying a digest of its bytes (RFC 9530)", () => {
    it.each([
      ["GET", "/content-digest"],
      ["GET", "/repr-digest"],
      ["GET", "/digest"],
      ["HEAD", "/content-digest"],
    ])(
      "%s %s, Accept-Encoding: gzip → sent uncoded, the digest still names the bytes",
      async (method, path) => {
        const { headers, bytes } = await raw(client(), method, path);
        expect(headers["content-encoding"]).toBeUndefined();
        if (method === "GET") {
          expect(bytes.toString()).toBe(body);
          expect(sha256(bytes)).toBe(sha256(body));
        }
      },
    );
  });
});
