import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A minimal reverse proxy on 127.0.0.1 that forwards every request to `target`, adding the
 * headers a gateway would (`X-Forwarded-*` or `Forwarded`), so tests see what a service behind a
 * load balancer sees.
 */
export async function simulatedProxy(
  target: string,
  addHeaders: Record<string, string>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, ...addHeaders },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reads a nested value of a parsed JSON body (`at(body, "_links", "self", "href")`). */
export function at(value: unknown, ...keys: (string | number)[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
