import { honoApp } from "../hono.js";

/** As much of Deno's global as this file uses (the suite type-checks without Deno's types). */
declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: (request: Request, info: unknown) => Response | Promise<Response>,
  ): unknown;
};

/** The Hono composition on `Deno.serve`, which hands Hono its `info`; tells the port it got on stderr. */
const app = honoApp();
Deno.serve(
  { port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.error(`listening ${port}`) },
  (request, info) => app(request, info),
);
