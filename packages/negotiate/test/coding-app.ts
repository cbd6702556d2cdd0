import type { Server } from "node:http";
import { Readable } from "node:stream";
import { createAdaptorServer } from "@hono/node-server";
import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import { fallbackErrors } from "@svc/test-utils/conformance";
import { Hono } from "hono";
import { codingStep, type Encoder } from "../src/coder.js";
import { representations } from "../src/index.js";

/** 200 items: a JSON body well over the coding threshold. */
export const items = Array.from({ length: 200 }, (_, i) => ({
  id: i,
  name: `Employee ${i}`,
  department: "R&D",
}));
export const json = JSON.stringify(items);

/**
 * A Hono app on `@hono/node-server` whose pipeline codes with `encoderFor`: `/items` as whole
 * bytes, `/stream` as a stream of two chunks.
 */
export function codingApp(encoderFor: (level: number | undefined) => Encoder): Promise<Listening> {
  const pipeline = createPipeline({ representations: representations(), coding: codingStep({}, encoderFor) });
  const svc = fetchAdapter(pipeline);
  const hono = new Hono();
  hono.use(svc.middleware);
  hono.onError((err, c) => fallbackErrors.fetch(err, c));
  hono.get("/items", (c) => svc.respond(c.req.raw, () => items));
  hono.get("/stream", (c) =>
    svc.respond(c.req.raw, () =>
      reply.bytes(Readable.from([json.slice(0, 5000), json.slice(5000)]), "application/json"),
    ),
  );
  return listenOn(createAdaptorServer({ fetch: hono.fetch }) as Server);
}
