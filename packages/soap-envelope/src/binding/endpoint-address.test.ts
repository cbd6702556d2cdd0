import { HttpError } from "@svc/errors";
import { describe, expect, it } from "vitest";
import { type AddressInput, endpointAddress } from "./endpoint-address.js";

const UNTRUSTED: AddressInput["facts"] = { trusted: false, forwarded: {}, vary: [] };

function address(target: string, host: readonly string[], facts = UNTRUSTED): string {
  return endpointAddress({ host, httpVersion: "1.1", facts, encrypted: false, path: "/ws/customer", target })
    .url;
}

function refusal(target: string, host: readonly string[]): unknown {
  try {
    address(target, host);
  } catch (err) {
    return err;
  }
  return undefined;
}

// RFC 9112 §3.2.2: "When an origin server receives a request with an absolute-form of
// request-target, the origin server MUST ignore the received Host header field (if any) and
// instead use the host information of the request-target." The Host lines are still checked
// (§3.2), as they are for every HTTP/1.1 request.
describe("endpointAddress: the host an absolute-form request-target names", () => {
  it.each([
    ["/ws/customer?wsdl", ["a.example"], "http://a.example/ws/customer"],
    ["http://b.example/ws/customer?wsdl", ["a.example"], "http://b.example/ws/customer"],
    ["HTTP://B.example:80/ws/customer", ["a.example"], "http://B.example/ws/customer"],
    ["http://b.example:8080?wsdl", ["a.example:8080"], "http://b.example:8080/ws/customer"],
    ["http://[::1]:8080/ws/customer", ["a.example"], "http://[::1]:8080/ws/customer"],
    ["https://b.example:443/ws/customer", ["a.example"], "http://b.example:443/ws/customer"],
    ["*", ["a.example"], "http://a.example/ws/customer"],
  ])("%s with Host %j → %s", (target, host, url) => {
    expect(address(target, host)).toBe(url);
  });

  it("a trusted peer's forwarded host still wins over the target's", () => {
    const facts = { trusted: true, forwarded: { host: "shop.example", proto: "https" }, vary: ["Forwarded"] };
    expect(address("http://b.example/ws/customer", ["a.example"], facts)).toBe(
      "https://shop.example/ws/customer",
    );
  });

  it.each([
    ["http:///ws/customer?wsdl", ["a.example"]],
    ["http://user@b.example/ws/customer", ["a.example"]],
    ["http://b.example:8o/ws/customer", ["a.example"]],
    ["http://b.example/ws/customer", ["a.example", "b.example"]],
    ["http://b.example/ws/customer", ["a b"]],
    ["http://b.example/ws/customer", []],
  ])("%s with Host %j → 400", (target, host) => {
    const err = refusal(target, host);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
  });
});
