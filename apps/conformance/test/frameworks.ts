import { createServer, type Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { express4, type Listening, listenOn, whenListening } from "@svc/test-utils";
import express from "express";
import { expressApp } from "../src/express.js";
import { fastifyApp } from "../src/fastify.js";
import { honoApp } from "../src/hono.js";
import { nodeApp } from "../src/node.js";
import { missing, RUNTIME_NAMES, type Served, startRuntime } from "./runtimes.js";

/** A framework of the table: its name and how its server of the composition starts. */
export interface Framework {
  name: string;
  start(): Promise<Served>;
}

/**
 * The Hono composition on another runtime (`runtimes.json`), in its own process; `skipped` says why
 * where that runtime is not installed or the packages are not built.
 */
function onRuntime(runtime: string): Framework & { skipped?: string } {
  if (!RUNTIME_NAMES.includes(runtime)) throw new Error(`${runtime} is not in runtimes.json`);
  const skipped = missing(runtime);
  const name = `hono-${runtime}`;
  return skipped === undefined
    ? { name, start: () => startRuntime(runtime) }
    : { name, start: () => Promise.reject(new Error(skipped)), skipped };
}

/**
 * The frameworks of the table, the first being the one the others are compared with. A framework
 * is one line here (and a composition module in `src/`, or an entry in `runtimes.json`).
 */
const ALL: readonly (Framework & { skipped?: string })[] = [
  { name: "express5", start: () => listenOn(createServer(expressApp(express))) },
  { name: "express4", start: () => listenOn(createServer(expressApp(express4))) },
  // Express's default routing, which folds case and a trailing slash: the rows of other spellings.
  {
    name: "express5-folding",
    start: () => listenOn(createServer(expressApp(express, { folding: true }))),
  },
  { name: "fastify", start: () => fastifyApp().then(async (app) => fastifyListening(app)) },
  { name: "node", start: () => listenOn(createServer(nodeApp())) },
  { name: "hono", start: () => listenOn(createAdaptorServer({ fetch: honoApp() }) as Server) },
  onRuntime("node22"),
  onRuntime("node24"),
  onRuntime("bun"),
  onRuntime("deno"),
  onRuntime("workerd"),
  onRuntime("workerd-compat"),
];

for (const { name, skipped } of ALL) {
  if (skipped === undefined) continue;
  // In CI the table must run on every runtime: it never passes by leaving one out.
  if (process.env.CI) throw new Error(`the conformance table cannot run on ${name}: ${skipped}`);
  console.warn(`[skip] the conformance table on ${name}: ${skipped}`);
}

/** The frameworks the table runs on here. */
export const FRAMEWORKS: readonly Framework[] = ALL.filter((f) => f.skipped === undefined);

/** Every framework's name, those left out here too (EXCEPTIONS.md may name them). */
export const FRAMEWORK_NAMES: readonly string[] = ALL.map((f) => f.name);

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
