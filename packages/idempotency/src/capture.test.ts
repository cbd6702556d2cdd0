import type { ServerResponse } from "node:http";
import { connect, createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { listen } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { type CapturedResponse, captureResponse, captureResponseHeld } from "./capture.js";

describe("captureResponse", () => {
  it("an end that throws (status code 1000) records nothing; the 500 sent after it is the response", async () => {
    const seen: CapturedResponse[] = [];
    const { url, close } = await listen((_req, res) => {
      captureResponse(res, 1024, (captured) => seen.push(captured));
      res.statusCode = 1000;
      try {
        res.end("first");
      } catch {
        res.statusCode = 500;
        res.end("failed");
      }
    });
    onTestFinished(close);
    const res = await fetch(url);
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("failed");
    expect(seen.map((c) => [c.status, c.body?.toString()])).toEqual([[500, "failed"]]);
  });
});

describe("captureResponseHeld", () => {
  it("an HTTP/2 compatibility response (its socket refuses to be written) → the end waits until the record is stored", async () => {
    const events: string[] = [];
    const server = createServer((_req, res) => {
      captureResponseHeld(res as unknown as ServerResponse, 1024, async (captured) => {
        // A store slower than the client: the response must still come after it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        events.push(`stored ${captured.status} ${captured.body?.toString()}`);
      });
      res.writeHead(201, { "content-type": "text/plain" });
      res.end("created");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    onTestFinished(() => {
      client.close();
    });
    const body = await new Promise<string>((resolve, reject) => {
      const stream = client.request({ ":method": "POST", ":path": "/" });
      let text = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        text += chunk;
      });
      stream.on("end", () => {
        events.push(`received ${text}`);
        resolve(text);
      });
      stream.on("error", reject);
      stream.end();
    });
    expect(body).toBe("created");
    expect(events).toEqual(["stored 201 created", "received created"]);
  });
});
