import { honoApp } from "../hono.js";

/** As much of Bun's global as this file uses (the suite type-checks without Bun's types). */
declare const Bun: {
  serve(options: {
    port: number;
    hostname: string;
    fetch(request: Request, server: unknown): Response | Promise<Response>;
  }): { port: number };
};

/** The Hono composition on `Bun.serve`, which hands Hono its server; tells the port it got on stderr. */
const app = honoApp();
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request, bun) => app(request, bun) });
console.error(`listening ${server.port}`);
