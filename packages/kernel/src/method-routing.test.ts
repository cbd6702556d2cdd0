import { describeOptions } from "@svc/test-utils";
import { describe, expect, it } from "vitest";
import {
  allowList,
  checkedAllow,
  checkedFields,
  checkRoutingOptions,
  emptyParameter,
  refusedMethods,
} from "./method-routing.js";

describe("allowList", () => {
  it.each<[string[], string]>([
    [["GET", "HEAD", "POST"], "GET, HEAD, POST, OPTIONS"],
    [["get", "head"], "GET, HEAD, OPTIONS"],
    [["OPTIONS", "GET"], "GET, OPTIONS"],
    [["GET", "GET", "PUT"], "GET, PUT, OPTIONS"],
    [[], "OPTIONS"],
  ])("%j → %s", (methods, allow) => {
    expect(allowList(methods).join(", ")).toBe(allow);
  });
});

describe("refusedMethods", () => {
  const routable = ["GET", "HEAD", "POST", "PUT", "OPTIONS", "CONNECT", "QUERY"];
  it.each<[string[], string[]]>([
    [
      ["GET", "HEAD", "OPTIONS"],
      ["POST", "PUT", "QUERY"],
    ],
    [["GET", "HEAD", "POST", "PUT", "QUERY"], []],
    [["OPTIONS"], ["GET", "HEAD", "POST", "PUT", "QUERY"]],
  ])("allowed %j → %j (never OPTIONS, never CONNECT)", (allowed, refused) => {
    expect(refusedMethods(routable, allowed)).toEqual(refused);
  });
});

describe("emptyParameter", () => {
  it.each<[Record<string, unknown>, boolean]>([
    [{ id: "7" }, false],
    [{ id: "" }, true],
    [{ parentId: "3", id: "" }, true],
    [{ "*": "" }, false],
    [{}, false],
  ])("%j → %s", (params, empty) => {
    expect(emptyParameter(params)).toBe(empty);
  });
});

describe("checkedAllow and checkedFields", () => {
  it("an Allow list is upper-cased in its order, OPTIONS added last when missing", () => {
    expect(checkedAllow(["get", "head", "post"])).toEqual(["GET", "HEAD", "POST", "OPTIONS"]);
    expect(checkedAllow(["GET", "OPTIONS", "POST"])).toEqual(["GET", "OPTIONS", "POST"]);
  });
  it("fields are lower-cased names with their values", () => {
    expect(checkedFields({ "Accept-Post": "application/json" })).toEqual([
      ["accept-post", "application/json"],
    ]);
    expect(checkedFields(undefined)).toEqual([]);
  });
});

const fn = () => new Error("x");
describeOptions("expressRouting options", [
  [
    "options",
    () => checkRoutingOptions("strict"),
    "ERR_SVC_KERNEL_OPTIONS",
    /expressRouting: options must be an object/,
    () => checkRoutingOptions(undefined),
  ],
  [
    "unknown",
    () => checkRoutingOptions({ notfound: fn }),
    "ERR_SVC_KERNEL_UNKNOWN_OPTION",
    /unknown option "notfound" \(did you mean "notFound"\?\)/,
    () => checkRoutingOptions({ notFound: fn }),
  ],
  [
    "notFound",
    () => checkRoutingOptions({ notFound: "404" }),
    "ERR_SVC_KERNEL_NOT_FOUND",
    /expressRouting: notFound must be a function \(target\) => Error, got "404"/,
    () => checkRoutingOptions({ notFound: fn }),
  ],
  [
    "methodNotAllowed",
    () => checkRoutingOptions({ methodNotAllowed: true }),
    "ERR_SVC_KERNEL_METHOD_NOT_ALLOWED",
    /methodNotAllowed must be a function \(target, allowed\) => Error, got true/,
    () => checkRoutingOptions({ methodNotAllowed: fn }),
  ],
  [
    "allow",
    () => checkedAllow([]),
    "ERR_SVC_KERNEL_ALLOW",
    /allow must be a non-empty array of method names/,
    () => checkedAllow(["GET"]),
  ],
  [
    "allow (a method no token)",
    () => checkedAllow(["GET", "NOT A METHOD"]),
    "ERR_SVC_KERNEL_ALLOW",
    /got \["GET", "NOT A METHOD"\]/,
    () => checkedAllow(["GET", "HEAD"]),
  ],
  [
    "allow (CONNECT)",
    () => checkedAllow(["CONNECT"]),
    "ERR_SVC_KERNEL_ALLOW",
    /CONNECT aside/,
    () => checkedAllow(["GET"]),
  ],
  [
    "fields",
    () => checkedFields({ "Accept-Post": 1 }),
    "ERR_SVC_KERNEL_FIELDS",
    /fields must be an object of field names to string values, got an object/,
    () => checkedFields({ "Accept-Post": "application/json" }),
  ],
  [
    "fields (a name no token)",
    () => checkedFields({ "Accept Post": "x" }),
    "ERR_SVC_KERNEL_FIELDS",
    /fields must be/,
    () => checkedFields({}),
  ],
]);
