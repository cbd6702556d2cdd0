import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { CustomerInput } from "../src/schemas.js";
import { documentOfTheApp } from "./openapi-check.js";

/**
 * The customer's `name` pattern in the document is read by every schema tool a client runs:
 * ECMA-262 engines with the `u` flag (ajv validating), without it (ajv-formats' `regex` check,
 * which Spectral runs on the document), and Rust's `regex` crate (jsonschema-rs, which
 * schemathesis validates with), which refuses a surrogate escape such as `\uD800` outright and
 * with it the whole schema. The rule is XML 1.0 `Char` and a character besides white space.
 * @see https://www.w3.org/TR/xml/#NT-Char
 */
const name = (
  documentOfTheApp() as {
    components: {
      schemas: { CustomerInput: { properties: { name: { pattern: string; description?: string } } } };
    };
  }
).components.schemas.CustomerInput.properties.name;
const pattern = name.pattern;

/**
 * The rule as it was first written: ECMA-262 only, with the surrogate range named and `\s` for
 * white space. What the document says must mean the same for every string of scalar values.
 */
const REFUSED = "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uD800-\\uDFFF\\uFFFE\\uFFFF";
const ECMA_ONLY = new RegExp(`^[^${REFUSED}]*[^\\s${REFUSED}][^${REFUSED}]*$`, "u");

/** Names of Unicode scalar values: every engine can be given them. */
const NAMES: [string, string][] = [
  ["ASCII", "Ada Lovelace"],
  ["Latin-1 and CJK", "Zoë 李"],
  ["a tab, LF and CR inside", "Ada\tB\nC\rD"],
  ["a non-BMP emoji", "Ada 😀"],
  ["only a non-BMP character", "𝒳"],
  ["U+10FFFF", "x\u{10FFFF}"],
  ["U+D7FF and U+E000", "\uD7FF\uE000"],
  ["U+FFFD", "\uFFFD"],
  ["a no-break space around a letter", "\u00A0a\u00A0"],
  ["U+0085 (white space to Rust, not to ECMA-262)", "\u0085"],
  ["U+0085 around spaces", " \u0085 "],
  ["U+200B (no white space anywhere)", "\u200B"],
  ["U+180E (white space to neither today)", "\u180E"],
  ["empty", ""],
  ["spaces only", "   "],
  [
    "every ECMA-262 white space",
    "\t\n\r \u000B\u000C\u00A0\u1680\u2000\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF",
  ],
  ["U+0001", "a\u0001b"],
  ["NUL", "a\u0000"],
  ["U+000B", "a\u000Bb"],
  ["U+000C", "\u000Ca"],
  ["U+001F", "a\u001F"],
  ["U+007F and U+0080 (XML characters)", "a\u007F\u0080"],
  ["U+FFFE", "a\uFFFE"],
  ["U+FFFF", "a\uFFFF"],
  ["U+FDD0 (a noncharacter XML takes)", "a\uFDD0"],
];

/** Strings no Rust or Python string can hold: JSON's `\uD800` escapes outside a pair. */
const LONE_SURROGATES: [string, string][] = [
  ["a lone high surrogate", "a\uD800b"],
  ["a lone low surrogate", "a\uDC00b"],
  ["a low surrogate before a high one", "\uDC00\uD800"],
  ["a lone surrogate at the end", "a\uDBFF"],
];

const server = (value: string) => CustomerInput.shape.name.safeParse(value).success;

describe("the customer name's pattern in the document, to ECMA-262 engines", () => {
  it("compiles with the u flag, and without it as ajv-formats' `regex` format checks it (Spectral)", () => {
    expect(() => new RegExp(pattern, "u")).not.toThrow();
    expect(() => new RegExp(pattern)).not.toThrow();
    const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ??
      Ajv2020Module) as new (options: {
      strict: boolean;
    }) => { validate(schema: object, data: unknown): boolean };
    const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
      addFormatsModule) as (ajv: unknown) => void;
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    expect(ajv.validate({ type: "string", format: "regex" }, pattern)).toBe(true);
  });

  it("names no surrogate code point (no \\uD800-\\uDFFF escape, no surrogate in the text)", () => {
    expect(pattern).not.toMatch(/\\u\{?0*[dD][89a-fA-F][0-9a-fA-F]{2}\}?/);
    expect([...pattern].some((c) => /^[\uD800-\uDFFF]$/u.test(c))).toBe(false);
  });

  it.each(NAMES)(
    "%s: taken or refused as the rule with the surrogate range and \\s decides",
    (_label, value) => {
      expect(new RegExp(pattern, "u").test(value)).toBe(ECMA_ONLY.test(value));
    },
  );

  it.each(NAMES)("%s: the server's check agrees with the pattern", (_label, value) => {
    expect(server(value)).toBe(new RegExp(pattern, "u").test(value));
  });

  it.each(LONE_SURROGATES)(
    "%s: the server refuses it, and the field's description says so",
    (_label, value) => {
      expect(server(value)).toBe(false);
      expect(ECMA_ONLY.test(value)).toBe(false);
      expect(name.description).toMatch(/lone surrogate/);
    },
  );
});

/**
 * Rust's `regex` crate, built from Debian's packaged source (librust-regex-dev) with no network:
 * the engine jsonschema-rs compiles a `pattern` with.
 */
const DEBIAN_CRATES = "/usr/share/cargo/registry";
const rustMissing = (() => {
  if (spawnSync("cargo", ["--version"], { stdio: "ignore" }).status !== 0) return "cargo is not installed";
  if (!existsSync(DEBIAN_CRATES) || !readdirSync(DEBIAN_CRATES).some((d) => d.startsWith("regex-1.")))
    return `${DEBIAN_CRATES} has no regex crate (Debian: apt-get install librust-regex-dev)`;
  return undefined;
})();
if (rustMissing && !process.env.CI) console.warn(`[skip] ${rustMissing}: the Rust regex check is skipped`);

/**
 * The checker (`test/rust-regex`) built with cargo from Debian's crates, offline. A build takes
 * some 20 s of both cores, so it is kept in `~/.cache/svc-rust-regex/<digest>`, named by the
 * digest of its sources and of cargo's version: a changed source or toolchain builds afresh.
 */
function patternChecker(): string {
  const source = fileURLToPath(new URL("./rust-regex", import.meta.url));
  const digest = createHash("sha256");
  digest.update(execFileSync("cargo", ["--version"]));
  for (const file of readdirSync(source, { recursive: true, encoding: "utf8" }).sort()) {
    const path = join(source, file);
    if (statSync(path).isFile()) digest.update(file).update(readFileSync(path));
  }
  const cache = join(homedir(), ".cache", "svc-rust-regex");
  const built = join(cache, digest.digest("hex").slice(0, 16));
  const binary = join(built, "target", "debug", "pattern-check");
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  // Built beside the cache's entry and renamed into it whole: a run that stops half-way, or two
  // runs at once, never leave a half-built checker where the next run would take it.
  const dir = mkdtempSync(join(cache, "build-"));
  try {
    cpSync(source, dir, { recursive: true });
    execFileSync(
      "cargo",
      [
        "build",
        "--offline",
        "--quiet",
        "--config",
        'source.crates-io.replace-with="debian"',
        "--config",
        `source.debian.directory="${DEBIAN_CRATES}"`,
      ],
      {
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, CARGO_TARGET_DIR: join(dir, "target") },
      },
    );
    // Another run may have put the same build there first: either is the same checker.
    if (!existsSync(binary)) renameSync(dir, built);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return binary;
}

describe.runIf(rustMissing && process.env.CI)("Rust's regex under CI", () => {
  it("cargo and librust-regex-dev are installed (CI installs them, .ci/run)", () => {
    throw new Error(rustMissing);
  });
});

describe.skipIf(rustMissing !== undefined)(
  "the customer name's pattern, to Rust's regex (jsonschema-rs)",
  () => {
    let checker: string;
    beforeAll(() => {
      checker = patternChecker();
    }, 240_000);

    const rust = (re: string, values: readonly string[]) => {
      const out = execFileSync(checker, [re], {
        input: values.map((v) => Buffer.from(v, "utf8").toString("hex")).join("\n"),
      })
        .toString()
        .trim()
        .split("\n");
      return { compiled: out[0], matches: out.slice(1).map((line) => line === "true") };
    };

    it("refuses the old rule's surrogate range, as jsonschema-rs did", () => {
      expect(rust(ECMA_ONLY.source, []).compiled).toMatch(/^error: .*Unicode scalar value/);
    });

    it("compiles the pattern and decides every name of scalar values as ECMA-262 does", () => {
      const { compiled, matches } = rust(
        pattern,
        NAMES.map(([, value]) => value),
      );
      expect(compiled).toBe("ok");
      expect(Object.fromEntries(NAMES.map(([label], i) => [label, matches[i]]))).toEqual(
        Object.fromEntries(NAMES.map(([label, value]) => [label, ECMA_ONLY.test(value)])),
      );
    });
  },
);
