import Negotiator from "negotiator";
import { describe, expect, it } from "vitest";
import { sendsCoded } from "./replay-coding.js";

/**
 * sendsCoded decides whether a stored gzip/br body is replayed as it is; the compression middleware
 * that stored it decided the same question with jshttp's negotiator. The two must agree on every
 * well-formed Accept-Encoding, so this table runs both over every field of up to three members drawn
 * from the names and weights below (with repeats and `*`), for each stored coding list.
 */
const NAMES = ["gzip", "br", "identity", "*", "deflate"];
const WEIGHTS = ["", ";q=1", ";q=0.5", ";q=0", ";q=0.001"];
const CODINGS: readonly (readonly string[])[] = [["gzip"], ["br"], ["gzip", "br"], []];

function reference(acceptEncoding: string | undefined, codings: readonly string[]): boolean {
  const negotiator = new Negotiator({ headers: { "accept-encoding": acceptEncoding } });
  return codings.every((coding) => negotiator.encodings([coding, "identity"])[0] === coding);
}

function* fields(): Generator<string | undefined> {
  yield undefined;
  yield "";
  const members = NAMES.flatMap((n) => WEIGHTS.map((w) => `${n}${w}`));
  for (const a of members) {
    yield a;
    for (const b of members) {
      yield `${a}, ${b}`;
      for (const c of ["gzip;q=0.5", "*;q=0.2", "identity;q=0.5", "br"]) yield `${a}, ${b}, ${c}`;
    }
  }
}

describe("sendsCoded agrees with the compression middleware's reading of Accept-Encoding", () => {
  it("on every field of the table, for every stored coding list", () => {
    const disagreements: string[] = [];
    let rows = 0;
    for (const field of fields()) {
      for (const codings of CODINGS) {
        rows++;
        const ours = sendsCoded(field, codings);
        if (ours !== reference(field, codings))
          disagreements.push(`${JSON.stringify(field)} [${codings}] → ${ours}`);
      }
    }
    expect(rows).toBeGreaterThan(10_000);
    expect(disagreements.slice(0, 20)).toEqual([]);
  });

  it.each([
    [undefined, ["gzip"], false],
    ["gzip", ["gzip"], true],
    ["gzip;q=0.5", ["gzip"], true],
    ["gzip;q=0.5, identity", ["gzip"], false],
    ["gzip;q=0", ["gzip"], false],
    ["*", ["br"], true],
    ["*, identity", ["br"], false],
    ["br, *;q=0", ["gzip", "br"], false],
  ] as const)("Accept-Encoding %j, stored %j → %s", (field, codings, expected) => {
    expect(sendsCoded(field, codings)).toBe(expected);
  });
});
