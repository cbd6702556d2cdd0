// The README's SOAP 1.1 example (readme-soap11.ts, the same text) on a real server, checked with fetch.

import { readFileSync } from "node:fs";
import { assertReadmeShows, type Listening, listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFault } from "./helpers.js";
import { app } from "./readme-soap11.js";

let url: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listen(app);
  url = `${listening.url}/greeter`;
});
afterAll(() => listening.close());

const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
const greet = (body: string) =>
  `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><g:greet xmlns:g="urn:example:greeter">${body}</g:greet></soap:Body></soap:Envelope>`;
const post = (body: string) =>
  fetch(url, {
    method: "POST",
    headers: { "Content-Type": "text/xml; charset=utf-8", SOAPAction: '"urn:example:greeter#greet"' },
    body,
  });

describe("README: a SOAP 1.1 contract", () => {
  it("the README shows exactly the code of readme-soap11.ts", () => {
    const code = readFileSync(new URL("./readme-soap11.ts", import.meta.url), "utf8");
    expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
  });
  it('greet with SOAPAction: "urn:example:greeter#greet" → 200 text/xml, a SOAP 1.1 envelope', async () => {
    const res = await post(greet("<g:name>Ada</g:name>"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/xml; charset=utf-8");
    const text = await res.text();
    expect(text).toContain(`xmlns:SOAP-ENV="${SOAP11}"`);
    expect(text).toContain("Hello, Ada (SOAP 1.1)</");
  });
  it("an empty name → 500 with faultcode SOAP-ENV:Client (SOAP 1.1 §6.2)", async () => {
    const res = await post(greet("<g:name></g:name>"));
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(readFault(text).code).toBe(`{${SOAP11}}Client`);
    expect(text).toContain("<faultstring>Whom shall I greet?</faultstring>");
  });
});
