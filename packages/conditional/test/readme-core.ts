import { createServer } from "node:http";
import { validators } from "@svc/conditional";
import { createPipeline, type HttpError } from "@svc/kernel";
import { pipelineRequest, writeResponse } from "@svc/kernel/node";
import { json, representations, xml } from "@svc/negotiate";

let doc = { id: 1, name: "Ada" };
const pipeline = createPipeline({
  representations: representations({ offers: [json, xml] }),
  validators: validators(), // a strong ETag per representation, 304, 412, Cache-Control
});

export const server = createServer(async (req, res) => {
  const request = pipelineRequest(req, res);
  const prepared = pipeline.prepare(request, req.url ?? "/");
  try {
    if (req.method === "PUT") {
      // If-Match may carry the tag of the JSON or of the XML: each is made as its GET makes it,
      // only until one matches; a stale one throws the 412, with the current tag.
      await pipeline.checkWrite(request, prepared, { data: doc });
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      doc = JSON.parse(Buffer.concat(chunks).toString());
    }
    const value = await pipeline.respond(request, prepared, doc); // 200 or 304 (a GET's 412 throws)
    await writeResponse(res, value, req.method ?? "GET");
  } catch (err) {
    const { status, headers, message } = err as HttpError;
    res.writeHead(status ?? 500, { ...headers, "Content-Type": "text/plain" }).end(message);
  }
});
