import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { SoapAuthenticationError } from "../wsse/credentials.js";
import type { XmlElement } from "../xml/reader.js";
import { WSSE_NS } from "./fault.js";

const MiB = 1_048_576;
const SENDER = `{${ENV}}Sender`;
const FAILED = `{${WSSE_NS}}FailedAuthentication`;
const login = `<c:Authentication xmlns:c="${TNS}"><c:Username>ada</c:Username></c:Authentication>`;

/** Accepts any message with an Authentication block; counts the calls. */
const calls: number[] = [];
async function authenticate(blocks: readonly XmlElement[]): Promise<{ name: string }> {
  calls.push(blocks.length);
  const name = blocks.find((b) => b.localName === "Authentication")?.children[0]?.text;
  if (!name) throw new SoapAuthenticationError("credentials are required");
  return { name };
}

/** A GetCustomerRequest whose content is `count` empty elements: close to 1 MiB at 200,000. */
function wideBody(count: number): string {
  return `<c:GetCustomerRequest xmlns:c="${TNS}">${"<c:x/>".repeat(count)}</c:GetCustomerRequest>`;
}

/** A GetCustomerRequest holding `units` copies of 60-deep nesting, up to about 1 MiB. */
function deepBody(bytes: number): string {
  const unit = `${"<c:a>".repeat(60)}${"</c:a>".repeat(60)}`;
  return `<c:GetCustomerRequest xmlns:c="${TNS}">${unit.repeat(Math.floor(bytes / unit.length))}</c:GetCustomerRequest>`;
}

describe("credentials are decided when the Header ends, before the Body is parsed", () => {
  // maxElements far below what the Body holds: a parse of the Body is seen as that limit's fault.
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService({ authenticate, limits: { maxElements: 5_000 } });
  });
  afterAll(() => svc.close());

  it("no credentials, a Body of 150,000 elements (1 MiB) → 400 wsse:FailedAuthentication, the Body unparsed", async () => {
    const message = envelope(wideBody(150_000));
    expect(message.length).toBeGreaterThan(0.85 * MiB);
    expect(message.length).toBeLessThan(MiB);
    const res = await post(svc.endpoint, message);
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(SENDER);
    expect(fault.subcodes).toEqual([FAILED]);
    expect(res.text).not.toContain("elements");
  });

  it("the same Body with credentials → 400 naming limits.maxElements: it is parsed once they pass", async () => {
    const res = await post(svc.endpoint, envelope(wideBody(150_000), login));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.subcodes).toEqual([]);
    expect(fault.reason).toBe("The message has more than 5000 elements");
  });

  it("no credentials, a Body that is not well-formed after its first element → wsse:FailedAuthentication", async () => {
    const res = await post(svc.endpoint, envelope(`${getCustomer("42")}<c:x></c:y>`));
    expect(readFault(res.text).subcodes).toEqual([FAILED]);
  });

  it("credentials, the same Body → 400 not well-formed (the rest is still parsed and checked)", async () => {
    const res = await post(svc.endpoint, envelope(`${getCustomer("42")}<c:x></c:y>`, login));
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toMatch(/not well-formed/);
  });

  it("credentials, a Body streamed in many chunks → 200 with the customer", async () => {
    const message = envelope(getCustomer("42"), `${login}${" ".repeat(40_000)}`);
    const chunks = Buffer.from(message);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < chunks.length; at += 1000) controller.enqueue(chunks.subarray(at, at + 1000));
        controller.close();
      },
    });
    const res = await fetch(svc.endpoint, {
      method: "POST",
      headers: { "content-type": "application/soap+xml; charset=utf-8" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Ada Lovelace");
  });

  it("credentials, a comment in the Body (the general parser's path) → 200", async () => {
    const res = await post(
      svc.endpoint,
      envelope(getCustomer("42").replace("<c:customerId>", "<!-- id --><c:customerId>"), login),
    );
    expect(res.status).toBe(200);
  });

  it("no credentials, junk instead of env:Body → a Sender fault before the hook runs", async () => {
    const before = calls.length;
    const res = await post(
      svc.endpoint,
      `<env:Envelope xmlns:env="${ENV}"><env:Junk>${"<x/>".repeat(20_000)}</env:Junk></env:Envelope>`,
    );
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toBe("env:Body is missing or not where Part 1 §5 puts it");
    expect(calls.length).toBe(before);
  });
});

describe("a Body of 60-deep nesting within every default limit", () => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService({ authenticate });
  });
  afterAll(() => svc.close());

  it("no credentials → 400 wsse:FailedAuthentication; with them → the schema's fault", async () => {
    // 94,500 elements: within limits.maxElements (100,000), so the whole Body parses once let in.
    const message = envelope(deepBody(1_040_000));
    const refused = await post(svc.endpoint, message);
    expect(readFault(refused.text).subcodes).toEqual([FAILED]);
    const admitted = await post(svc.endpoint, envelope(deepBody(1_040_000), login));
    expect(admitted.status).toBe(400);
    expect(readFault(admitted.text).reason).toMatch(/^Invalid request/);
  });
});

describe("limits.maxHeaderBlocks", () => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  let small: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService({ authenticate });
    small = await startCustomerService({ authenticate, limits: { maxHeaderBlocks: 2 } });
  });
  afterAll(async () => {
    await svc.close();
    await small.close();
  });
  const block = (i: number) => `<h:b${i} xmlns:h="urn:x"/>`;
  const blocks = (n: number) => Array.from({ length: n }, (_, i) => block(i)).join("");

  it("40,000 header blocks (1 MiB) → 400 Sender naming limits.maxHeaderBlocks, the hook never called", async () => {
    const before = calls.length;
    const res = await post(
      svc.endpoint,
      envelope(getCustomer("42"), `${login}${"<h:b xmlns:h='urn:x'/>".repeat(40_000)}`),
    );
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(SENDER);
    expect(fault.reason).toBe("The message has more than 64 header blocks (limits.maxHeaderBlocks)");
    expect(calls.length).toBe(before);
  });

  it("64 header blocks (the default) → 200", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42"), `${login}${blocks(63)}`));
    expect(res.status).toBe(200);
  });

  it("65 header blocks → 400", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42"), `${login}${blocks(64)}`));
    expect(readFault(res.text).reason).toMatch(/more than 64 header blocks/);
  });

  it("maxHeaderBlocks: 2, three blocks with a comment (the general parser) → 400 naming 2", async () => {
    const res = await post(small.endpoint, envelope(getCustomer("42"), `<!-- c -->${login}${blocks(2)}`));
    expect(readFault(res.text).reason).toBe(
      "The message has more than 2 header blocks (limits.maxHeaderBlocks)",
    );
  });
});
