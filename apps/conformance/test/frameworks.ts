import { createServer, type Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { express4, type Listening, listenOn, whenListening } from "@svc/test-utils";
import express from "express";
import { expressApp } from "../src/express.js";
import { fastifyApp } from "../src/fastify.js";
import { honoApp } from "../src/hono.js";
import { nodeApp } from "../src/node.js";

/** A framework of the table: its name and how its server of the composition starts. */
export interface Framework {
  name: string;
  start(): Promise<Listening>;
}

/**
 * The frameworks the table runs on, the first being the one the others are compared with. A
 * framework is one line here (and a composition module in `src/`).
 */
export const FRAMEWORKS: readonly Framework[] = [
  { name: "express5", start: () => listenOn(createServer(expressApp(express))) },
  { name: "express4", start: () => listenOn(createServer(expressApp(express4))) },
  { name: "fastify", start: () => fastifyApp().then(async (app) => fastifyListening(app)) },
  { name: "node", start: () => listenOn(createServer(nodeApp())) },
  { name: "hono", start: () => listenOn(createAdaptorServer({ fetch: honoApp() }) as Server) },
];

async function fastifyListening(app: Awaited<ReturnType<typeof fastifyApp>>): Promise<Listening> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const listening = await whenListening(app.server);
  return {
    ...listening,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}
