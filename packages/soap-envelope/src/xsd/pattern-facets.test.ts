import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  FIXTURES,
  post,
  readFault,
  silentLogger,
  soapErrors,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { soapEndpoint } from "../express.js";

/**
 * Regular-expression denial of service through a pattern facet: the customer Email pattern
 * `[^@\s]+@[^@\s]+\.[^@\s]+` backtracks quadratically in V8 on `a@` + dots + `@`. The timeouts
 * below only detect a frozen process (a backtracking engine takes tens of seconds on the first
 * value and hours on the 1 MiB one); they assert no speed.
 */
const HANG = 15_000;
const ATTACK = `a@${".".repeat(128_000)}@`;
const MIB_ATTACK = `a@${".".repeat(1024 * 1024 - 3)}@`;

const create = (email: string) =>
  `<c:CreateCustomerRequest xmlns:c="${TNS}"><c:customer><c:id>7</c:id><c:name>Mallory</c:name><c:email>${email}</c:email></c:customer></c:CreateCustomerRequest>`;

describe("pattern facets cannot freeze the process", () => {
  let shipped: Awaited<ReturnType<typeof startCustomerService>>;
  let patternOnly: Awaited<ReturnType<typeof listen>> & { endpoint: string };
  let dir: string;

  beforeAll(async () => {
    shipped = await startCustomerService();
    // The same contract with Email's maxLength removed: only the pattern engine stands between
    // a huge value and the CPU. The message limit is raised so a 1 MiB value reaches the schema.
    dir = mkdtempSync(join(tmpdir(), "soap-redos-"));
    const xsd = readFileSync(join(FIXTURES, "customer.xsd"), "utf8");
    const withoutMax = xsd.replace(
      /(<xs:simpleType name="Email">[\s\S]*?)<xs:maxLength value="254"\/>/,
      "$1",
    );
    expect(withoutMax).not.toBe(xsd);
    writeFileSync(join(dir, "customer.xsd"), withoutMax);
    writeFileSync(join(dir, "customer.wsdl"), readFileSync(CUSTOMER_WSDL, "utf8"));
    const app = express();
    app.use(
      "/ws/customer",
      soapEndpoint({
        wsdl: join(dir, "customer.wsdl"),
        handlers: customerHandlers(),
        logger: silentLogger,
        limits: { maxBytes: 4 * 1024 * 1024 },
      }),
    );
    app.use(soapErrors("/ws/customer"));
    const server = await listen(app);
    patternOnly = { ...server, endpoint: `${server.url}/ws/customer` };
  });
  afterAll(async () => {
    await shipped.close();
    await patternOnly.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "email a@ + 128,000 dots + @ (pattern only) → 400 does not match the pattern",
    async () => {
      const res = await post(patternOnly.endpoint, envelope(create(ATTACK)));
      expect(res.status).toBe(400);
      expect(readFault(res.text).reason).toMatch(/email: .* does not match the pattern/);
    },
    HANG,
  );

  it(
    "email a@ + 1 MiB of dots + @ (pattern only) → 400 does not match the pattern",
    async () => {
      const res = await post(patternOnly.endpoint, envelope(create(MIB_ATTACK)));
      expect(res.status).toBe(400);
      expect(readFault(res.text).reason).toMatch(/email: .* does not match the pattern/);
    },
    HANG,
  );

  it(
    "email of 1 MiB that matches the pattern (pattern only) → 200",
    async () => {
      const res = await post(patternOnly.endpoint, envelope(create(`a@b.${"c".repeat(1024 * 1024)}`)));
      expect(res.status).toBe(200);
    },
    HANG,
  );

  it(
    "email a@ + 128,000 dots + @ (maxLength 254) → 400 on the length, before the pattern",
    async () => {
      const res = await post(shipped.endpoint, envelope(create(ATTACK)));
      expect(res.status).toBe(400);
      expect(readFault(res.text).reason).toMatch(/email: length must be at most 254/);
    },
    HANG,
  );

  it(
    "email of 1 MiB (maxLength 254, message limit 1 MiB) → 413, the body is not parsed",
    async () => {
      const res = await post(shipped.endpoint, envelope(create(MIB_ATTACK)));
      expect(res.status).toBe(413);
    },
    HANG,
  );

  it(
    "while an attack is answered, the next request is served too",
    async () => {
      const [attack, ok] = await Promise.all([
        post(patternOnly.endpoint, envelope(create(ATTACK))),
        post(patternOnly.endpoint, envelope(create("jane@example.com"))),
      ]);
      expect(attack.status).toBe(400);
      expect(ok.status).toBe(200);
    },
    HANG,
  );
});
