import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ConditionalDiagnostic } from "@svc/conditional";
import type { Listening } from "@svc/test-utils";
import { send, serve } from "@svc/test-utils/conformance";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PATH, SERVED_ON, soapMounts } from "../../test/mounts.js";

// The WSDL and its schemas are answered by the kernel's pipeline, whose validators step
// (`validators()` of @svc/conditional) evaluates RFC 9110 §13.2.2 on the tag of the bytes sent:
// the decision is the one every resource gets, published on `svc:conditional` with the request.

/** What `svc:conditional` publishes until `afterEach`. */
const decided: ConditionalDiagnostic[] = [];
const listener = (message: unknown) => decided.push(message as ConditionalDiagnostic);
afterEach(() => {
  unsubscribe("svc:conditional", listener);
  decided.length = 0;
});

describe.each(SERVED_ON)("WSDL and XSD preconditions on %s (RFC 9110 §13.2.2)", (framework) => {
  let server: Listening;
  beforeAll(async () => {
    server = await serve(framework, soapMounts());
  });
  afterAll(() => server.close());

  const tagOf = async (path: string) => (await send(server.url, { path })).headers.etag as string;

  it.each([`${PATH}?wsdl`, `${PATH}?xsd=customer.xsd`])(
    "GET %s, If-None-Match: <its tag> → 304, svc:conditional not-modified by If-None-Match",
    async (path) => {
      const etag = await tagOf(path);
      subscribe("svc:conditional", listener);
      const res = await send(server.url, { path, headers: { "If-None-Match": etag } });
      expect(res.status).toBe(304);
      expect(decided).toHaveLength(1);
      expect(decided[0]).toMatchObject({ decision: "not-modified", field: "If-None-Match" });
      expect(decided[0]?.request).toBeTypeOf("object");
    },
  );

  it('GET ?wsdl, If-Match: "stale" → 412 with the current tag, svc:conditional precondition-failed by If-Match', async () => {
    const etag = await tagOf(`${PATH}?wsdl`);
    subscribe("svc:conditional", listener);
    const res = await send(server.url, { path: `${PATH}?wsdl`, headers: { "If-Match": '"stale"' } });
    expect(res.status).toBe(412);
    expect(res.headers.etag).toBe(etag);
    expect(decided).toMatchObject([{ decision: "precondition-failed", field: "If-Match" }]);
  });

  it("GET ?wsdl, If-Modified-Since: now → 200: the document has no modification date (§13.1.3)", async () => {
    subscribe("svc:conditional", listener);
    const res = await send(server.url, {
      path: `${PATH}?wsdl`,
      headers: { "If-Modified-Since": new Date().toUTCString() },
    });
    expect(res.status).toBe(200);
    expect(res.headers["last-modified"]).toBeUndefined();
    expect(decided).toEqual([]);
  });
});
