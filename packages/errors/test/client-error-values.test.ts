import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { clientErrorHandler } from "../src/node.js";
import { listenWith } from "./listen-with.js";

// clientErrorHandler writes its response's bytes on the socket itself, so a field value is
// checked and written as one and the same string: RFC 9110 §5.5 field values hold no CR or LF,
// and one that did would end the field line and start a field (or a response) of the sender's
// making (RFC 9112 §2.2, §5). The headers option is typed to return strings: a value of another
// type (from plain JavaScript, or a header store's own objects) has no single text to check.

function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
  });
}

/** A value whose text is harmless when checked and splits the response when written. */
function flipping(): { toString(): string } {
  let reads = 0;
  return {
    toString: () => (reads++ % 2 === 0 ? "ok" : "ok\r\nSet-Cookie: session=attacker"),
  };
}

async function answer(value: unknown): Promise<{ head: string[]; body: string; logged: unknown[] }> {
  const logged: unknown[] = [];
  const { server, port } = await listenWith({}, (_req, res) => res.end("ok"));
  server.on(
    "clientError",
    clientErrorHandler({
      logger: {
        error(obj) {
          logged.push(obj);
        },
      },
      headers: () => [
        ["X-Content-Type-Options", "nosniff"],
        ["X-Value", value as string],
      ],
    }),
  );
  const text = await raw(port, "GET / HTTP/1.1\r\nBad Header Line\r\n\r\n");
  const end = text.indexOf("\r\n\r\n");
  return { head: text.slice(0, end).split("\r\n"), body: text.slice(end + 4), logged };
}

describe("clientErrorHandler: a headers value is checked as it is written", () => {
  it.each([
    ["an object whose text changes between reads", flipping()],
    ["an object whose text holds CR LF", { toString: () => "a\r\nSet-Cookie: session=attacker" }],
    ["an array", ["a", "b"]],
    ["a symbol", Symbol("x")],
    ["null", null],
    ["NaN", Number.NaN],
  ])("%s → left out, logged by name, one response", async (_label, value) => {
    const { head, body, logged } = await answer(value);
    expect(head[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(head.filter((line) => /^set-cookie:/i.test(line))).toEqual([]);
    expect(head.filter((line) => /^x-value:/i.test(line))).toEqual([]);
    expect(head).toContain("X-Content-Type-Options: nosniff");
    expect(JSON.parse(body)).toMatchObject({ status: 400, path: "/" });
    expect(logged).toEqual([expect.objectContaining({ droppedHeaders: ["X-Value"], status: 400 })]);
  });

  it.each([
    ["a string", "no-referrer", "X-Value: no-referrer"],
    ["a number", 3600, "X-Value: 3600"],
    ["an empty string", "", "X-Value: "],
  ])("%s → sent", async (_label, value, line) => {
    const { head, logged } = await answer(value);
    expect(head[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(head).toContain(line);
    expect(logged).toEqual([]);
  });
});
