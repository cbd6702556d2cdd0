import { describe, expect, it } from "vitest";
import { type Principal, principalKey } from "./exchange.js";

const A = "https://a.example/";
const B = "https://b.example/";
const long = "x".repeat(129);

describe("principalKey", () => {
  it.each<[string, Principal, string]>([
    ["an application's user keeps its id", { id: "alice" }, "alice"],
    [
      "an issuer's subject is qualified by the issuer",
      { id: "alice", issuer: A },
      "@https%3A%2F%2Fa.example%2F alice",
    ],
    ["an id that starts with @ gets one more", { id: "@alice" }, "@@alice"],
    ["a subject with a space stays after the issuer's", { id: "a b", issuer: "x" }, "@x a b"],
  ])("%s", (_, principal, key) => {
    expect(principalKey(principal)).toBe(key);
  });

  it("two issuers' alice are two keys, and neither is the application's alice", () => {
    const keys = new Set([
      principalKey({ id: "alice", issuer: A }),
      principalKey({ id: "alice", issuer: B }),
      principalKey({ id: "alice" }),
    ]);
    expect(keys.size).toBe(3);
  });

  it("no spelling of issuer and subject meets another's", () => {
    const principals: Principal[] = [
      { id: "b c", issuer: "a" },
      { id: "c", issuer: "a b" },
      { id: "@a b c" },
      { id: "@a%20b c" },
      { id: "c", issuer: "a%20b" },
      { id: "#x" },
      { id: "#x", issuer: "a" },
      { id: `#${"y".repeat(43)}` },
      { id: long },
      { id: long, issuer: "a" },
      { id: "alice", issuer: "" },
      { id: " alice" },
      { id: "@ alice" },
      { id: "alice", issuer: "$" },
      { id: "alice", issuer: "h".repeat(300) },
      { id: "alice", issuer: "h".repeat(301) },
    ];
    const keys = principals.map(principalKey);
    expect(new Set(keys).size).toBe(principals.length);
  });

  it.each([
    ["a subject longer than 128 characters", { id: "s".repeat(10_000), issuer: A }],
    ["an issuer longer than 256 characters encoded", { id: "alice", issuer: "i".repeat(10_000) }],
    ["an application's id longer than 128 characters", { id: "u".repeat(10_000) }],
  ])("%s is carried as a digest: the key stays short", (_, principal) => {
    const key = principalKey(principal);
    expect(key.length).toBeLessThan(128 + 64);
    expect(principalKey({ ...principal })).toBe(key);
  });
});
