import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A server listening on an ephemeral loopback port. */
export interface Listening {
  /** `http://127.0.0.1:<port>` */
  url: string;
  server: Server;
  close: () => Promise<void>;
}

/**
 * Starts an Express app (or any request listener) on 127.0.0.1 with an ephemeral port, so tests
 * talk to a real listening server through a real client (`fetch`).
 */
export function listen(handler: RequestListener): Promise<Listening> {
  return listenOn(createServer(handler));
}

/** Starts a server built elsewhere (a README example's `server`) the same way as {@link listen}. */
export function listenOn(server: Server): Promise<Listening> {
  server.listen(0, "127.0.0.1");
  return whenListening(server);
}

/**
 * A server that was told to listen elsewhere (a README example ends with `server.listen(0)`), once
 * it is bound, with its URL and a `close` that ends kept-alive connections too.
 */
export async function whenListening(server: Server): Promise<Listening> {
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.once("listening", () => resolve());
    });
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
