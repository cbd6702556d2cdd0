// packages-hono-app.mjs served by @hono/node-server on this Node.js; `../runtimes.mjs` serves the
// same app on the other runtimes, each with its own server.
import "./tick-shape.mjs";
import { serve } from "@hono/node-server";
import { benchPort, exitOnSigterm } from "../fixtures.mjs";
import { app } from "./packages-hono-app.mjs";

serve({ fetch: app.fetch, port: benchPort(), hostname: "127.0.0.1" });
exitOnSigterm();
