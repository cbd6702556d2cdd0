import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateTypes } from "@svc/soap-envelope";
import { describe, expect, it } from "vitest";

const APP = join(import.meta.dirname, "..");
const CONTRACTS = join(APP, "contracts");

// The SOAP handlers are type-checked against these files (soapEndpoint<...Operations>); they must
// say what the contracts say. After changing a contract: npm run soap-types -w @svc/reference-server.
describe("generated SOAP types", () => {
  it.each(["customer", "price"])("src/soap/%s.types.ts is what contracts/%s.wsdl generates", (name) => {
    const generated = generateTypes(readFileSync(join(CONTRACTS, `${name}.wsdl`), "utf8"), {
      baseDir: CONTRACTS,
      source: `${name}.wsdl`,
    });
    expect(readFileSync(join(APP, "src/soap", `${name}.types.ts`), "utf8")).toBe(generated);
  });
});
