import { describe, expect, it } from "vitest";
import { targetPath } from "./request-target.js";

describe("targetPath: the path of a request-target (RFC 9112 §3.2)", () => {
  it.each([
    ["/ws/customer", "/ws/customer"],
    ["/ws/customer?wsdl", "/ws/customer"],
    ["/?xsd=customer.xsd", "/"],
    ["/", "/"],
    ["http://x/ws/customer", "/ws/customer"],
    ["http://x/ws/customer?wsdl", "/ws/customer"],
    ["https://api.example.com:8443/ws/customer/?x=http://y/z", "/ws/customer/"],
    ["http://x", "/"],
    ["http://x?wsdl", "/"],
    ["http://x?next=http://y/ws", "/"],
    ["http://user@x/a//b", "/a//b"],
    ["*", "*"],
    ["", ""],
    ["ws/customer?wsdl", "ws/customer"],
  ])("%j → %j", (target, path) => {
    expect(targetPath(target)).toBe(path);
  });
});
