import { createServer, type Server, Socket } from "node:net";

/** A TCP proxy in front of a service, to take the service away from its clients and give it back. */
export interface TcpProxy {
  port: number;
  /**
   * Cuts the service off: open connections are reset and new ones refused (`refuse`), or
   * accepted and never answered, like a network partition (`blackhole`).
   */
  cut(mode?: "refuse" | "blackhole"): Promise<void>;
  /** Forwards again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (a free port) and pipes every connection to `target`. The shared
 * PostgreSQL is never stopped: cutting this proxy is the outage the service sees.
 */
export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: "forward" | "refuse" | "blackhole" = "forward";
  const open = new Set<Socket>();
  let port = 0;
  let server: Server | undefined;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        open.add(client);
        client.once("close", () => open.delete(client));
        client.on("error", () => {});
        if (mode === "blackhole") return;
        const upstream = new Socket();
        open.add(upstream);
        upstream.once("close", () => open.delete(upstream));
        upstream.on("error", () => client.destroy());
        client.on("error", () => upstream.destroy());
        client.once("close", () => upstream.destroy());
        upstream.once("close", () => client.destroy());
        upstream.connect(target.port, target.host, () => {
          client.pipe(upstream);
          upstream.pipe(client);
        });
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        const address = s.address();
        port = typeof address === "object" && address ? address.port : port;
        server = s;
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      s.close(() => resolve());
    });
  const resetAll = () => {
    for (const socket of open) socket.resetAndDestroy?.() ?? socket.destroy();
    open.clear();
  };

  await listen();
  return {
    get port() {
      return port;
    },
    async cut(how = "refuse") {
      mode = how;
      resetAll();
      if (how === "refuse") await stopListening();
      else if (!server) await listen();
    },
    async restore() {
      resetAll();
      mode = "forward";
      if (!server) await listen();
    },
    async close() {
      resetAll();
      await stopListening();
    },
  };
}
