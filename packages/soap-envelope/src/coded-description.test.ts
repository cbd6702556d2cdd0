import { gunzipSync } from "node:zlib";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CUSTOMER_WSDL, customerHandlers, silentLogger } from "../test/helpers.js";
import { soapEndpoint, soapErrorHandler } from "./endpoint.js";

// A compressing negotiate() of @svc/negotiate in front of the endpoint, as an app composing the
// packages mounts it: a gzip client's ?wsdl / ?xsd= 200 goes out coded, its strong ETag made weak
// (RFC 9110 §8.8.3: the gzip bytes are another representation, whose tag is W/). The
// preconditions were compared with the strong form: If-Match with the strong tag got a 200 saying
// W/ (a validator that fails the strong comparison, §8.8.3.2, the request had just passed), and
// the 304 to If-None-Match: W/... carried the strong tag, not the one its 200 sends (§15.4.5).
// They are now compared with the tag the response sends (§13.1.1: the selected representation's
// current entity tag).
let coded: Listening;
let uncoded: Listening;

async function serve(threshold: number): Promise<Listening> {
  const app = express();
  app.use(negotiate({ compression: { threshold } }));
  app.use(
    "/ws/customer",
    soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers(), logger: silentLogger }),
    soapErrorHandler(),
  );
  return listen(app);
}

beforeAll(async () => {
  coded = await serve(0);
  // Above the size of either document: @svc/negotiate leaves them uncoded, their tags strong.
  uncoded = await serve(1_000_000);
});
afterAll(async () => {
  await coded.close();
  await uncoded.close();
});

const gzip = { "accept-encoding": "gzip" };
const documents = [
  ["?wsdl", "/ws/customer?wsdl"],
  ["?xsd=customer.xsd", "/ws/customer?xsd=customer.xsd"],
] as const;

/** The strong tag of the identity bytes: the one a client not accepting gzip gets. */
async function strongTag(server: Listening, path: string): Promise<string> {
  const res = await raw(`${server.url}${path}`, "GET", { "accept-encoding": "identity" });
  expect(res.status).toBe(200);
  expect(res.headers.etag).toMatch(/^"/);
  return res.headers.etag as string;
}

describe("?wsdl / ?xsd= behind a compressing negotiate(): preconditions compare the tag sent", () => {
  it.each(documents)("GET %s, gzip → 200 coded, ETag W/<strong tag>", async (_name, path) => {
    const strong = await strongTag(coded, path);
    const res = await raw(`${coded.url}${path}`, "GET", gzip);
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(res.headers.etag).toBe(`W/${strong}`);
    expect(gunzipSync(res.body).toString()).toContain("<");
  });

  it.each(documents)(
    "GET and HEAD %s, gzip, If-None-Match: <the W/ tag the 200 carried> → 304 carrying that W/ tag and Vary: Accept-Encoding",
    async (_name, path) => {
      const weak = (await raw(`${coded.url}${path}`, "GET", gzip)).headers.etag as string;
      expect(weak).toMatch(/^W\//);
      for (const method of ["GET", "HEAD"]) {
        const res = await raw(`${coded.url}${path}`, method, { ...gzip, "if-none-match": weak });
        expect(res.status).toBe(304);
        expect(res.headers.etag).toBe(weak);
        expect(res.headers.vary).toMatch(/accept-encoding/i);
        expect(res.headers["cache-control"]).toBe("no-cache");
        expect(res.body.length).toBe(0);
      }
    },
  );

  it.each(documents)(
    "GET and HEAD %s, gzip, If-Match: <strong tag> → 412 carrying W/<strong tag>, not a 200 saying W/",
    async (_name, path) => {
      const strong = await strongTag(coded, path);
      for (const method of ["GET", "HEAD"]) {
        const res = await raw(`${coded.url}${path}`, method, { ...gzip, "if-match": strong });
        expect(res.status).toBe(412);
        expect(res.headers.etag).toBe(`W/${strong}`);
      }
    },
  );

  it.each(documents)(
    "GET %s, gzip, If-Match: W/<strong tag> → 412 (a weak tag never matches strongly)",
    async (_name, path) => {
      const strong = await strongTag(coded, path);
      const res = await raw(`${coded.url}${path}`, "GET", { ...gzip, "if-match": `W/${strong}` });
      expect(res.status).toBe(412);
      expect(res.headers.etag).toBe(`W/${strong}`);
    },
  );

  it.each(documents)(
    "GET %s, Accept-Encoding: identity, If-Match: <strong tag> → 200 with the strong tag",
    async (_name, path) => {
      const strong = await strongTag(coded, path);
      const res = await raw(`${coded.url}${path}`, "GET", {
        "accept-encoding": "identity",
        "if-match": strong,
      });
      expect(res.status).toBe(200);
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(res.headers.etag).toBe(strong);
    },
  );

  it.each(documents)(
    "GET %s, gzip, under the threshold, If-Match: <strong tag> → 200 uncoded with the strong tag",
    async (_name, path) => {
      const strong = await strongTag(uncoded, path);
      const res = await raw(`${uncoded.url}${path}`, "GET", { ...gzip, "if-match": strong });
      expect(res.status).toBe(200);
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(res.headers.etag).toBe(strong);
      const notModified = await raw(`${uncoded.url}${path}`, "GET", { ...gzip, "if-none-match": strong });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.etag).toBe(strong);
    },
  );
});
