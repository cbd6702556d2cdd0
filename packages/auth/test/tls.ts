import { readFileSync } from "node:fs";
import { request } from "node:https";
import type { DiscoveryFetch } from "../src/discovery.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

/** A self-signed certificate for `localhost` and `127.0.0.1` (test only, never a secret). */
export const TLS = { key: fixture("localhost-key.pem"), cert: fixture("localhost-cert.pem") };

/**
 * A `fetch` that trusts {@link TLS}'s certificate: the global `fetch` takes no CA, and the
 * process's trust store is not the test's to change.
 */
export function fetchTrustingTestCa(): DiscoveryFetch {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers) : init.headers;
      const req = request(url, { method: init.method, headers, ca: TLS.cert, signal: init.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined)
              responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
          resolve(
            new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers: responseHeaders }),
          );
        });
      });
      req.on("error", reject);
      req.end();
    });
}
