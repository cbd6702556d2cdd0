import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "./express.js";
import { byteLimit } from "./options.js";

/** body-parser's `limit` goes through the `bytes` package: units are powers of 1024. */
describe("parseBody limit: a size as body-parser takes it", () => {
  it.each([
    [0, 0],
    [102_400, 102_400],
    ["0", 0],
    ["1024", 1024],
    ["10b", 10],
    ["100kb", 102_400],
    ["1mb", 1_048_576],
    ["1MB", 1_048_576],
    ["1Mb", 1_048_576],
    ["1.5mb", 1_572_864],
    ["0.5kb", 512],
    ["1.1kb", 1126],
    ["1 mb", 1_048_576],
    ["2  gb", 2 * 1024 ** 3],
    ["1tb", 1024 ** 4],
    ["7pb", 7 * 1024 ** 5],
    ["1.5", 1],
  ])("limit: %j → %d bytes", (given, bytes) => {
    expect(byteLimit("parseBody", "limit", given)).toBe(bytes);
  });

  it.each([
    ["100 kilobytes"],
    ["1m"],
    ["1 megabyte"],
    ["-1kb"],
    ["+1kb"],
    [" 1mb"],
    ["1mb "],
    ["100abc"],
    ["1e3"],
    ["0x10"],
    [".5mb"],
    ["1.mb"],
    ["1\tmb"],
    [""],
    ["kb"],
    ["8pb"],
    ["99999999999999999"],
    [-1],
    [1.5],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [true],
  ])("limit: %j → TypeError ERR_SVC_NEGOTIATE_LIMIT", (given) => {
    expect(() => parseBody({ limit: given as never })).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_NEGOTIATE_LIMIT",
        message: expect.stringMatching(
          /^parseBody: limit must be a non-negative integer \(bytes\) or a size/,
        ),
      }),
    );
  });
});

describe('parseBody({ limit: "1kb" }) through a listening server', () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.post("/echo", parseBody({ limit: "1kb" }), (req, res) => {
      res.status(201).json({ received: typeof req.body });
    });
    app.use(errorHandler());
    server = await listen(app);
  });
  afterAll(() => server.close());

  const post = (size: number) =>
    fetch(`${server.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `"${"x".repeat(size - 2)}"`,
    });

  it("a JSON body of 1024 bytes → 201", async () => {
    expect((await post(1024)).status).toBe(201);
  });

  it("a JSON body of 1025 bytes → 413", async () => {
    expect((await post(1025)).status).toBe(413);
  });
});
