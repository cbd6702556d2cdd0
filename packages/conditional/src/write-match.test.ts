import { createServer } from "node:http";
import { createPipeline, type HttpError } from "@svc/kernel";
import { pipelineRequest, writeResponse } from "@svc/kernel/node";
import { json, representations, xml } from "@svc/negotiate";
import { type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ValidatorsOptions, validators } from "./index.js";

/** A document served as JSON and XML whose PUT checks its preconditions under `writeMatch`. */
function documentServer(writeMatch: ValidatorsOptions["writeMatch"]) {
  let doc = { id: 1, name: "Ada" };
  const pipeline = createPipeline({
    representations: representations({ offers: [json, xml] }),
    validators: validators(writeMatch === undefined ? {} : { writeMatch }),
  });
  return createServer(async (req, res) => {
    const request = pipelineRequest(req, res);
    const prepared = pipeline.prepare(request, req.url ?? "/");
    try {
      if (req.method === "PUT") {
        await pipeline.checkWrite(request, prepared, { data: doc });
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        doc = JSON.parse(Buffer.concat(chunks).toString());
      }
      await writeResponse(res, await pipeline.respond(request, prepared, doc), req.method ?? "GET");
    } catch (err) {
      const { status, headers } = err as HttpError;
      res.writeHead(status ?? 500, headers).end();
    }
  });
}

const servers: Record<string, Listening> = {};
beforeAll(async () => {
  servers.default = await listenOn(documentServer(undefined));
  servers.any = await listenOn(documentServer("any"));
  servers.selected = await listenOn(documentServer("selected"));
});
afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
});

const XML = "application/xml";
const JSON_TYPE = "application/json";

async function tagOf(mode: string, accept: string): Promise<string> {
  return (await fetch(`${servers[mode]?.url}/doc`, { headers: { accept } })).headers.get("etag") ?? "";
}

async function put(mode: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${servers[mode]?.url}/doc`, {
    method: "PUT",
    headers: { "content-type": JSON_TYPE, ...headers },
    body: JSON.stringify({ id: 1, name: "Ada" }),
  });
}

/**
 * RFC 9110 §13.1.1: If-Match is true when a listed tag matches "the selected representation".
 * `"any"` (the default) accepts the tag of any representation of the current state; `"selected"`
 * only the tag of the one the write negotiates, as its GET would be answered.
 */
describe("validators({ writeMatch }): which representation's tag a write's If-Match is compared with", () => {
  it.each([
    // mode, the representation whose tag the client holds, the write's Accept, status
    ["default", XML, JSON_TYPE, 200],
    ["any", XML, JSON_TYPE, 200],
    ["any", JSON_TYPE, XML, 200],
    ["any", JSON_TYPE, JSON_TYPE, 200],
    ["selected", XML, JSON_TYPE, 412],
    ["selected", JSON_TYPE, XML, 412],
    ["selected", XML, XML, 200],
    ["selected", JSON_TYPE, JSON_TYPE, 200],
  ])("%s: If-Match with the %s tag, PUT with Accept: %s → %i", async (mode, held, accept, status) => {
    const tag = await tagOf(mode, held);
    const res = await put(mode, { accept, "if-match": tag });
    expect(res.status).toBe(status);
    // A 412 advertises the tag of the representation the write negotiated.
    if (status === 412) expect(res.headers.get("etag")).toBe(await tagOf(mode, accept));
  });

  it.each(["any", "selected"])(
    "%s: If-None-Match: * on the existing document → 412; If-Match: * → 200",
    async (mode) => {
      expect((await put(mode, { "if-none-match": "*" })).status).toBe(412);
      expect((await put(mode, { "if-match": "*" })).status).toBe(200);
    },
  );
});
