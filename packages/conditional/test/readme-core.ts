import { createServer } from "node:http";
import { checkPreconditions, conditional, representationTag } from "@svc/conditional";
import type { HttpError } from "@svc/errors";

let doc = { id: 1, name: "Ada" };
const asJson = () => JSON.stringify(doc);
const asXml = () => `<doc><id>${doc.id}</id><name>${doc.name}</name></doc>`;
const revalidate = conditional(); // a strong ETag from the bytes sent, 304 on a match

export const server = createServer(async (req, res) => {
  if (req.method === "GET") {
    const xml = req.headers.accept === "application/xml";
    return revalidate(req, res, () => {
      res.setHeader("Content-Type", xml ? "application/xml" : "application/json");
      res.end(xml ? asXml() : asJson());
    });
  }
  try {
    // One current tag per representation: If-Match may carry either (the XML one is computed
    // only when the JSON one is not named); a failed precondition throws the 412.
    await checkPreconditions(req, {
      etag: {
        "application/json": representationTag("application/json", undefined, asJson()),
        "application/xml": () => representationTag("application/xml", undefined, asXml()),
      },
    });
  } catch (err) {
    const { status, headers, message } = err as HttpError; // 412 with the current ETag
    return void res.writeHead(status, { ...headers, "Content-Type": "text/plain" }).end(message);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  doc = JSON.parse(Buffer.concat(chunks).toString());
  res.writeHead(200, { "Content-Type": "application/json" }).end(asJson());
});
