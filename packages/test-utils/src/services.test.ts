import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "./services.js";

const RANGE = "/proc/sys/net/ipv4/ip_local_port_range";
let ephemeral: [number, number] | undefined;
try {
  const [low, high] = readFileSync(RANGE, "utf8").trim().split(/\s+/).map(Number);
  ephemeral = [low as number, high as number];
} catch {
  console.warn(`[skip] ${RANGE} is not readable: skipping the ephemeral-range check of freePort`);
}

describe("freePort", () => {
  it.skipIf(!ephemeral)(
    "100 ports → none inside the kernel's ephemeral range, where listen(0) and outgoing connections take theirs",
    async () => {
      const [low, high] = ephemeral as [number, number];
      const ports = await Promise.all(Array.from({ length: 100 }, () => freePort()));
      for (const port of ports) {
        expect(port >= low && port <= high, `port ${port} in ${low}-${high}`).toBe(false);
        expect(port).toBeGreaterThanOrEqual(1024);
      }
      expect(new Set(ports).size).toBeGreaterThan(90);
    },
  );

  it("the port it gives → can be bound on 127.0.0.1 at once", async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
