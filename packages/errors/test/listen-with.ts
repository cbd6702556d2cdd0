import { createServer, type RequestListener, type Server, type ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * A `node:http` server created with `options` (which @svc/test-utils' `listen` does not take),
 * listening on an ephemeral loopback port and closed after the test.
 */
export async function listenWith(
  options: ServerOptions,
  handler: RequestListener,
): Promise<{ server: Server; port: number; url: string }> {
  const server = createServer(options, handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, port, url: `http://127.0.0.1:${port}` };
}
