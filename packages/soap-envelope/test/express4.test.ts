import { createRequire } from "node:module";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { soapEndpoint, soapErrorHandler } from "../src/index.js";
import { CUSTOMER_WSDL, customerHandlers, envelope, getCustomer, post, silentLogger } from "./helpers.js";

/** Express 4, installed beside Express 5 under the alias `express4` (a root dev dependency). */
const express4 = createRequire(import.meta.url)("express4") as typeof express;
const { version } = createRequire(import.meta.url)("express4/package.json") as { version: string };
const servers: Listening[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});
async function serve(app: express.Express): Promise<string> {
  const server = await listen(app);
  servers.push(server);
  return server.url;
}

describe(`soapEndpoint() on Express ${version}`, () => {
  it("GetCustomer answers 200 with the customer; ?wsdl serves the contract", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(
      "/ws/customer",
      soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers(), logger: silentLogger }),
      soapErrorHandler(),
    );
    const url = await serve(app);
    const res = await post(`${url}/ws/customer`, envelope(getCustomer("42")));
    expect(res.status).toBe(200);
    expect(res.text).toContain("Ada Lovelace");
    const wsdl = await fetch(`${url}/ws/customer?wsdl`);
    expect(wsdl.status).toBe(200);
    expect(await wsdl.text()).toContain("definitions");
  });
});
