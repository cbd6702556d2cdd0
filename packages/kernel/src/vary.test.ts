import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendVary, mergeVary } from "./vary.js";

// Each request says, in query parameters, the Vary already set (`has`, repeatable for several
// field lines) and the fields to append (`add`, repeatable); the response shows the result.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const query = new URL(req.url ?? "/", "http://x").searchParams;
    const has = query.getAll("has");
    if (has.length === 1) res.setHeader("Vary", has[0] as string);
    else if (has.length > 1) res.setHeader("Vary", has);
    appendVary(res, ...query.getAll("add"));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function varyAfter(has: string[], add: string[]): Promise<string | null> {
  const query = new URLSearchParams([
    ...has.map((h): [string, string] => ["has", h]),
    ...add.map((a): [string, string] => ["add", a]),
  ]);
  return (await fetch(`${url}/?${query}`)).headers.get("vary");
}

describe("appendVary", () => {
  it.each([
    [[], ["Accept"], "Accept"],
    [[], ["Accept", "Accept-Encoding"], "Accept, Accept-Encoding"],
    [[], ["Accept", "accept"], "Accept"],
    [["Origin"], ["Accept"], "Origin, Accept"],
    [["Origin, accept"], ["Accept"], "Origin, accept"],
    [["Origin ,\tACCEPT "], ["Accept", "Origin"], "Origin ,\tACCEPT "],
    [["Accept-Encoding"], ["Accept"], "Accept-Encoding, Accept"],
    [["Accept"], ["Accept-Encoding"], "Accept, Accept-Encoding"],
    [["Origin", "Accept"], ["accept", "Accept-Language"], "Origin, Accept, Accept-Language"],
    [["*"], ["Accept"], "*"],
    [["Origin, *"], ["Accept"], "Origin, *"],
    [["Origin"], ["Accept", "*"], "*"],
    [[""], ["Accept"], "Accept"],
    [["Origin"], [], "Origin"],
    [[], [], null],
  ])("Vary %j + %j → %j", async (has, add, expected) => {
    expect(await varyAfter(has, add)).toBe(expected);
  });
});

// A sequence of steps on one response, as `op=<step>` query parameters in order: `add:<a>,<b>`
// appends through appendVary, `set:<value>` and `remove` change the header directly (what code
// outside appendVary does between two calls).
describe("appendVary after the header was changed by other code", () => {
  let stepServer: Server;
  let stepUrl: string;
  beforeAll(async () => {
    stepServer = createServer((req, res) => {
      for (const step of new URL(req.url ?? "/", "http://x").searchParams.getAll("op")) {
        if (step === "remove") res.removeHeader("Vary");
        else if (step.startsWith("set:")) res.setHeader("Vary", step.slice(4));
        else if (step.startsWith("add:")) appendVary(res, ...step.slice(4).split(","));
      }
      res.end();
    });
    await new Promise<void>((resolve) => stepServer.listen(0, "127.0.0.1", resolve));
    stepUrl = `http://127.0.0.1:${(stepServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => stepServer.close(() => resolve())));

  it.each([
    [
      ["add:Accept", "add:ACCEPT", "add:Origin", "add:accept-encoding", "add:Accept-Encoding"],
      "Accept, Origin, accept-encoding",
    ],
    [["add:Accept", "set:Origin", "add:Accept"], "Origin, Accept"],
    [["add:Accept,Origin", "set:Cookie", "add:Origin"], "Cookie, Origin"],
    [["add:Accept", "remove", "add:Origin"], "Origin"],
    [["add:Accept", "set:*", "add:Origin"], "*"],
    [["add:Accept", "set:accept", "add:Accept"], "accept"],
    [["add:Accept", "add:*", "add:Origin"], "*"],
    [["set:Origin", "add:Accept", "add:Origin", "add:Accept"], "Origin, Accept"],
  ])("%j → Vary: %j", async (steps, expected) => {
    const query = new URLSearchParams(steps.map((s): [string, string] => ["op", s]));
    expect((await fetch(`${stepUrl}/?${query}`)).headers.get("vary")).toBe(expected);
  });
});

// A gate's names are one frozen list, whose steps are held by list: the same answers as a list
// made for the call, on the first use of a value and on every later one, past the bound too.
describe("mergeVary of a frozen list", () => {
  const cases: [string, string[], string | undefined][] = [
    ["", ["API-Version", "Accept-Version"], "API-Version, Accept-Version"],
    ["Origin", ["API-Version", "origin"], "Origin, API-Version"],
    ["api-version, ORIGIN", ["API-Version", "Origin"], undefined],
    ["*", ["Accept"], undefined],
    ["Origin", ["Accept", "*"], "*"],
    ["Accept", [], undefined],
  ];

  it.each(cases)("%j + frozen %j → %j, every time", (current, names, expected) => {
    const frozen = Object.freeze([...names]);
    for (let i = 0; i < 3; i++) {
      expect(mergeVary(current, frozen)).toBe(expected);
      expect(mergeVary(current, [...names])).toBe(expected);
    }
  });

  it("keeps answering past 64 values held for one list", () => {
    const frozen = Object.freeze(["Accept"]);
    for (let i = 0; i < 200; i++) {
      expect(mergeVary(`X-${i}`, frozen)).toBe(`X-${i}, Accept`);
      expect(mergeVary(`X-${i}, accept`, frozen)).toBeUndefined();
    }
  });
});
