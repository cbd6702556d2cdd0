import { errorHandler } from "@svc/errors/express";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HIDDEN_TAGS, LISTED_TAGS } from "../test/tables.js";
import { preconditions } from "./express.js";

// RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text, so a comma belongs to an opaque-tag
// (`"x,"` is one entity-tag), and §5.6.1 separates list members only by the commas between them.
// A malformed member (`"x,"v1"`: the tag `"x,"` followed by `v1"`) was dropped only up to the next
// comma, counted from its start, which could be the one inside its own quoted tag: the rest of it,
// `"v1"`, was then read as a member and matched. A PUT whose If-Match named the current tag only
// inside another tag's quotes went ahead, a GET with such an If-None-Match got a 304. A malformed
// member now ends at the next comma outside a quoted string.

const CURRENT = '"v1"';

describe("a tag inside another member's quotes is no member (RFC 9110 §8.8.3, §5.6.1)", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    const current = () => ({ etag: CURRENT });
    app.all("/doc", preconditions({ current }), (req, res) => {
      res.setHeader("ETag", CURRENT);
      // res.end, not res.json: Express's own freshness check (req.fresh, which splits the value on
      // commas) would answer a 304 of its own; what is tested is preconditions().
      if (req.method === "GET" || req.method === "HEAD") res.type("json").end(JSON.stringify({ id: 1 }));
      else res.status(204).end();
    });
    app.use(errorHandler({ logger: { error: () => {} } }));
    server = await listen(app);
  });
  afterAll(async () => {
    await server.close();
  });

  const rows = (values: string[], listed: boolean) =>
    values.flatMap((value) =>
      ["GET", "HEAD", "PUT", "DELETE", "PATCH", "POST"].flatMap((method) => [
        {
          value,
          method,
          field: "if-match",
          status: listed ? (method === "GET" || method === "HEAD" ? 200 : 204) : 412,
        },
        {
          value,
          method,
          field: "if-none-match",
          status: listed
            ? method === "GET" || method === "HEAD"
              ? 304
              : 412
            : method === "GET" || method === "HEAD"
              ? 200
              : 204,
        },
      ]),
    );

  it.each(rows(HIDDEN_TAGS, false))(
    "$method $field: $value → $status",
    async ({ value, method, field, status }) => {
      const res = await raw(`${server.url}/doc`, method, { [field]: value });
      expect(res.status).toBe(status);
      if (status === 412) expect(res.headers.etag).toBe(CURRENT);
    },
  );

  it.each(rows(LISTED_TAGS, true))(
    "$method $field: $value → $status",
    async ({ value, method, field, status }) => {
      const res = await raw(`${server.url}/doc`, method, { [field]: value });
      expect(res.status).toBe(status);
    },
  );
});
