// The README's WS-Addressing example (readme-addressing.ts, the same text) on a real server,
// called as a WCF client calls it.

import { readFileSync } from "node:fs";
import { assertReadmeShows, type Listening, listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replyHeaders, WSA } from "./addressing.js";
import { readFault } from "./helpers.js";
import { app } from "./readme-addressing.js";

let url: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listen(app);
  url = `${listening.url}/greeter`;
});
afterAll(() => listening.close());

const ENV = "http://www.w3.org/2003/05/soap-envelope";
const greet = (headers: string) =>
  `<s:Envelope xmlns:s="${ENV}" xmlns:a="${WSA}"><s:Header>${headers}</s:Header><s:Body><g:greet xmlns:g="urn:example:greeter"><g:name>Ada</g:name></g:greet></s:Body></s:Envelope>`;
const wcf = (action: string) =>
  `<a:Action s:mustUnderstand="1">${action}</a:Action><a:MessageID>urn:uuid:0f6b1c4e-3d6a-4a8e-9a55-1b2c3d4e5f60</a:MessageID><a:ReplyTo><a:Address>${WSA}/anonymous</a:Address></a:ReplyTo><a:To s:mustUnderstand="1">${url}</a:To>`;
const post = (body: string) =>
  fetch(url, { method: "POST", headers: { "Content-Type": "application/soap+xml; charset=utf-8" }, body });

describe("README: WS-Addressing", () => {
  it("the README shows exactly the code of readme-addressing.ts", () => {
    const code = readFileSync(new URL("./readme-addressing.ts", import.meta.url), "utf8");
    expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
  });

  it("a WCF client's call → 200, the reply's wsa:Action, wsa:MessageID and wsa:RelatesTo", async () => {
    const res = await post(greet(wcf("urn:example:greeter:Greeter:greet")));
    expect(res.status).toBe(200);
    const text = await res.text();
    const reply = replyHeaders(text);
    expect(reply.headers.Action).toBe("urn:example:greeter:Greeter:greetResponse");
    expect(reply.headers.RelatesTo).toBe("urn:uuid:0f6b1c4e-3d6a-4a8e-9a55-1b2c3d4e5f60");
    expect(reply.headers.MessageID).toMatch(/^urn:uuid:/);
    expect(text).toContain("Hello, Ada (message urn:uuid:0f6b1c4e-3d6a-4a8e-9a55-1b2c3d4e5f60)");
  });

  it("an action the contract does not declare → 400 env:Sender / wsa:ActionNotSupported", async () => {
    const res = await post(greet(wcf("urn:example:greeter:Greeter:wave")));
    expect(res.status).toBe(400);
    expect(readFault(await res.text()).subcodes).toEqual([`{${WSA}}ActionNotSupported`]);
  });

  it("no WS-Addressing where the binding requires it → 400 wsa:MessageAddressingHeaderRequired", async () => {
    const res = await post(greet(""));
    expect(res.status).toBe(400);
    expect(readFault(await res.text()).subcodes).toEqual([`{${WSA}}MessageAddressingHeaderRequired`]);
  });
});
