import { errorHandler } from "@svc/errors/express";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EARLIER, MODIFIED, NBSP_PRECONDITIONS } from "../test/tables.js";
import { preconditions } from "./express.js";

// RFC 9110 §5.5: a field value carries no leading or trailing whitespace, and the whitespace of
// its grammar is OWS = *( SP / HTAB ) (§5.6.3). U+00A0 (byte A0, obs-text) is no whitespace there,
// but String.prototype.trim() removes it: `If-Match: <A0>*` passed a write as `*` would, where any
// other malformed If-Match is a 412; `If-None-Match: <A0>*` earned a 304; an If-Modified-Since or
// If-Unmodified-Since with an A0 beside the date was read as that HTTP-date (§13.1.3, §13.1.4: a
// value that is not one MUST be ignored); and a handler's `ETag: "v1"<A0>`, no entity-tag
// (§8.8.3), was kept and sent (validators() drops it: validators-core.test.ts).
const body = { id: 1 };

describe("preconditions(): U+00A0 (obs-text) around a precondition is no OWS", () => {
  let server: Listening;
  const onWarning = () => {};
  beforeAll(async () => {
    process.on("warning", onWarning);
    const app = express();
    const current = () => ({ etag: '"v1"', lastModified: new Date(MODIFIED) });
    app.get("/r", preconditions({ current }), (req, res) => {
      res.set("ETag", typeof req.query.tag === "string" ? req.query.tag : '"v1"');
      res.set("Last-Modified", MODIFIED);
      // res.end, not res.json: Express's own freshness check (req.fresh) would answer a 304 of
      // its own; what is tested is preconditions().
      res.type("json").end(JSON.stringify(body));
    });
    app.put("/r", preconditions({ current }), (_req, res) => void res.status(204).end());
    app.put(
      "/required",
      preconditions({ current, required: true }),
      (_req, res) => void res.status(204).end(),
    );
    app.use(errorHandler({ logger: { error: () => {} } }));
    server = await listen(app);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await server.close();
  });

  it.each(NBSP_PRECONDITIONS)(
    "%s %s %j → %d (the value is no * and no HTTP-date)",
    async (method, path, headers, status) => {
      expect((await raw(`${server.url}${path}`, method, headers)).status).toBe(status);
    },
  );

  // The same values with OWS (SP, HTAB) inside a list, and the plain ones, still hold.
  it.each([
    ["GET", "/r", { "if-none-match": "*" }, 304],
    ["GET", "/r", { "if-none-match": `"x" ,\t"v1"\t` }, 304],
    ["PUT", "/r", { "if-match": "*" }, 204],
    ["PUT", "/r", { "if-match": `"x",\t "v1"` }, 204],
    ["PUT", "/r", { "if-none-match": "*" }, 412],
    ["GET", "/r", { "if-modified-since": MODIFIED }, 304],
    ["GET", "/r", { "if-unmodified-since": EARLIER }, 412],
    ["PUT", "/r", { "if-unmodified-since": EARLIER }, 412],
  ])("%s %s %j → %d (control)", async (method, path, headers, status) => {
    expect((await raw(`${server.url}${path}`, method, headers)).status).toBe(status);
  });
});
