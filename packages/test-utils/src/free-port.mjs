// Plain JavaScript, so that the repository's .mjs scripts (the registry suite, the bench harness)
// pick ports the same way as the TypeScript suites; types in free-port.d.mts.
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port {@link freePort} hands out: above the registered services a machine may run. */
const LOWEST_PORT = 20_000;

/**
 * The ports the kernel gives outgoing connections and `listen(0)` (Linux's
 * `ip_local_port_range`; elsewhere, the IANA dynamic range).
 * @returns {[number, number]}
 */
function ephemeralRange() {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low, high];
  } catch {
    // not Linux
  }
  return [49_152, 65_535];
}

/**
 * @param {number} port
 * @returns {Promise<number | undefined>} the port bound (and closed again), or undefined if taken
 */
function bindable(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that is free now, for a process started later (a child server, a
 * Redis node, nginx, a registry). It is drawn at random below the kernel's ephemeral range: a
 * port from `listen(0)` lies inside that range, and between this call and the later bind any
 * other process's `listen(0)` or outgoing connection could be given it. Below the range only
 * another caller of this function can pick it, one chance in several thousand.
 * @returns {Promise<number>}
 */
export async function freePort() {
  const [ephemeralLow, ephemeralHigh] = ephemeralRange();
  const below = [LOWEST_PORT, ephemeralLow - 1];
  const above = [ephemeralHigh + 1, 65_535];
  const [low, high] = below[1] - below[0] >= above[1] - above[0] ? below : above;
  if (high - low >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await bindable(low + randomInt(high - low + 1));
      if (port !== undefined) return port;
    }
  }
  const port = await bindable(0);
  if (port === undefined) throw new Error("freePort: no port could be bound on 127.0.0.1");
  return port;
}
