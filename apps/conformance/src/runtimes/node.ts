import { serve } from "@hono/node-server";
import { honoApp } from "../hono.js";

/** The Hono composition on Node.js, as `@hono/node-server` serves it; tells the port it got on stderr. */
serve({ fetch: honoApp(), port: 0, hostname: "127.0.0.1" }, ({ port }) => {
  console.error(`listening ${port}`);
});
