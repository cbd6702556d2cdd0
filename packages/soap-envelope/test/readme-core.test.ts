// The README's node:http example (readme-core.ts, the same text) on a real server, checked with fetch.

import { readFileSync } from "node:fs";
import { assertReadmeShows, type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFault } from "./helpers.js";
import { server } from "./readme-core.js";

let url: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listenOn(server);
  url = `${listening.url}/greeter`;
});
afterAll(() => listening.close());

const ENV = "http://www.w3.org/2003/05/soap-envelope";
const SOAP = "application/soap+xml; charset=utf-8";
const greet = (body: string) =>
  `<env:Envelope xmlns:env="${ENV}"><env:Body><g:greet xmlns:g="urn:example:greeter">${body}</g:greet></env:Body></env:Envelope>`;
const post = (body: string, contentType = SOAP) =>
  fetch(url, { method: "POST", headers: { "Content-Type": contentType }, body });

describe("README: the core from plain node:http", () => {
  it("the README shows exactly the code of readme-core.ts", () => {
    const code = readFileSync(new URL("./readme-core.ts", import.meta.url), "utf8");
    expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
  });
  it("greet → 200 application/soap+xml with the greeting", async () => {
    const res = await post(greet("<g:name>Ada</g:name>"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/soap+xml; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("greetResponse");
    expect(text).toContain("Hello, Ada</");
  });
  it("a body the schema refuses → 400 env:Sender", async () => {
    const res = await post(greet("<g:nom>Ada</g:nom>"));
    expect(res.status).toBe(400);
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
  it("text/plain → 415 with Accept-Post", async () => {
    const res = await post(greet("<g:name>Ada</g:name>"), "text/plain");
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/soap+xml");
  });
  it('If-Match: "x" → 412 env:Sender before the message is read (RFC 9110 §13.1.1)', async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": SOAP, "If-Match": '"x"' },
      body: greet("<g:name>Ada</g:name>"),
    });
    expect(res.status).toBe(412);
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
  it("GET → 405 fault with Allow: POST", async () => {
    const res = await fetch(url);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
});
