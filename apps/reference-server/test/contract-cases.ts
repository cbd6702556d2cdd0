import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import fc from "fast-check";

/*
 * Requests generated from an OpenAPI 3.1 document alone, the way a contract fuzzer reads it: valid
 * values for every schema (boundaries, huge integers, every code point the schema allows) and
 * invalid ones (a value past a bound, of another type, breaking a pattern or a format, a required
 * field missing, an unknown one added). Nothing here knows the reference server.
 */

export type Json = Record<string, unknown>;
type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown[] | null };
interface AjvLike {
  compile(schema: Json): ValidateFn;
  addSchema(schema: Json): void;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/** An integer schema without bounds or format allows any integer: far past 64 bits too. */
const UNBOUNDED = 2n ** 70n;

/** A JSON value that may hold integers beyond 2^53 as BigInt, written with every digit. */
export function stringify(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `\u0000big:${v}` : v)).replace(
    /"\\u0000big:(-?\d+)"/g,
    "$1",
  );
}

/** The document with its `$ref`s resolved on demand and a JSON Schema validator over its components. */
export class Contract {
  readonly doc: Json;
  readonly #ajv: AjvLike;
  readonly #compiled = new Map<unknown, ValidateFn>();

  constructor(doc: Json) {
    this.doc = doc;
    const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
      opts: Json,
    ) => AjvLike;
    const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
      addFormatsModule) as (ajv: unknown) => void;
    // Two decimals of a JSON number (0.07) are no exact binary multiple of 0.01.
    this.#ajv = new Ajv2020({
      strict: false,
      allErrors: false,
      validateFormats: true,
      multipleOfPrecision: 9,
    });
    addFormats(this.#ajv);
    this.#ajv.addSchema({
      $id: "https://contract.invalid/openapi.json",
      components: (doc.components as Json) ?? {},
    });
  }

  /** The node a `$ref` (a chain of them) points at. */
  resolve<T = Json>(node: unknown): T {
    let at = node as Json;
    for (let i = 0; i < 20 && at && typeof at.$ref === "string"; i++) {
      const pointer = (at.$ref as string).replace(/^#\//, "").split("/");
      let next: unknown = this.doc;
      for (const part of pointer) next = (next as Json)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
      at = next as Json;
    }
    return at as T;
  }

  /** Whether `value` is valid against `schema` (a schema of the document, `$ref`s included). */
  valid(schema: Json, value: unknown): boolean {
    let v = this.#compiled.get(schema);
    if (!v) {
      const rebased = JSON.parse(
        JSON.stringify(schema).replaceAll(
          '"#/components/',
          '"https://contract.invalid/openapi.json#/components/',
        ),
      );
      v = this.#ajv.compile(rebased);
      this.#compiled.set(schema, v);
    }
    // ajv reads numbers: a BigInt is checked as the nearest double, then the 64-bit bound apart.
    return v(JSON.parse(stringify(value)));
  }

  /** The first validation error of the last `valid` call for `schema`, for failure messages. */
  why(schema: Json): string {
    const errors = this.#compiled.get(schema)?.errors ?? [];
    const e = errors[0] as { instancePath?: string; message?: string } | undefined;
    return e ? `${e.instancePath || "/"} ${e.message ?? ""}` : "";
  }

  // -------------------------------------------------------------------------------------------
  // Valid values
  // -------------------------------------------------------------------------------------------

  /** Values valid against `schema`. `text` restricts strings to header-safe characters. */
  valuesOf(node: unknown, text: "any" | "header" = "any", depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(node);
    if (!s || typeof s !== "object" || depth > 8) return fc.constant(null);
    if ("const" in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    if (Array.isArray(s.allOf)) {
      const parts = (s.allOf as unknown[]).map((p) => this.resolve<Json>(p));
      const { allOf: _a, ...rest } = s;
      return this.valuesOf(Object.assign({}, ...parts, rest), text, depth + 1);
    }
    const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (alternatives) return fc.oneof(...alternatives.map((a) => this.valuesOf(a, text, depth + 1)));
    if (Array.isArray(s.type))
      return fc.oneof(...(s.type as string[]).map((t) => this.valuesOf({ ...s, type: t }, text, depth + 1)));
    switch (s.type) {
      case "integer":
        return integers(s);
      case "number":
        return numbers(s);
      case "string":
        return strings(s, text);
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const min = (s.minItems as number | undefined) ?? 0;
        const max = Math.min((s.maxItems as number | undefined) ?? 4, min + 4);
        return fc.array(this.valuesOf(s.items, text, depth + 1), { minLength: min, maxLength: max });
      }
      case "object":
        return this.objects(s, text, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private objects(s: Json, text: "any" | "header", depth: number): fc.Arbitrary<unknown> {
    const properties = (s.properties as Record<string, unknown> | undefined) ?? {};
    const required = new Set((s.required as string[] | undefined) ?? []);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, schema] of Object.entries(properties))
      model[name] = this.valuesOf(schema, text, depth + 1);
    const record = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
    const min = (s.minProperties as number | undefined) ?? 0;
    return min > 0 ? record.filter((o) => Object.keys(o).length >= min) : record;
  }

  // -------------------------------------------------------------------------------------------
  // Invalid values
  // -------------------------------------------------------------------------------------------

  /**
   * Values that break `schema` at its top level: another type, past a bound, too long or short,
   * off the pattern, the format or the enum. As parameters are strings on the wire, `wire` makes
   * a non-string schema's values strings too ("1.5" for an integer).
   */
  invalidOf(node: unknown, wire = false): fc.Arbitrary<unknown> | undefined {
    const s = this.resolve(node);
    const out: fc.Arbitrary<unknown>[] = [];
    const type = Array.isArray(s.type) ? undefined : (s.type as string | undefined);
    if (type === "integer" || type === "number") {
      const { lo, hi } = range(s);
      if (lo !== undefined) out.push(fc.constant(lo - 1n));
      if (hi !== undefined) out.push(fc.constant(hi + 1n), fc.constant(hi + 2n ** 64n));
      if (type === "integer") out.push(fc.constant(1.5));
      out.push(fc.constant(wire ? "abc" : "12"), fc.constant(wire ? "" : null));
      if (!wire) out.push(fc.constant(true), fc.constant([]), fc.constant({}));
    } else if (type === "string") {
      if (typeof s.maxLength === "number") out.push(fc.constant("a".repeat(s.maxLength + 1)));
      if (typeof s.minLength === "number" && s.minLength > 0) out.push(fc.constant(""));
      if (typeof s.pattern === "string") {
        // Candidates, some of which break the pattern: the caller keeps those that do.
        out.push(
          fc.constantFrom("", " ", "\u0000", "x\u0000y", "a b", "~", "é", "AB", "ab"),
          fc.string({ minLength: 1, maxLength: 12, unit: "binary-ascii" }),
        );
      }
      if (s.format === "email")
        out.push(
          fc.constantFrom(
            "plainaddress",
            "a@",
            "@example.com",
            "a@b",
            "a b@example.com",
            "a..b@example.com",
            "a@b..com",
            ".a@example.com",
            "a@-b.com",
            "a@b-.com",
          ),
        );
      if (Array.isArray(s.enum)) out.push(fc.constant("not-a-member"));
      if (!wire) out.push(fc.constant(12), fc.constant(null), fc.constant([]));
    } else if (Array.isArray(s.enum) || "const" in s) {
      out.push(fc.constant("not-a-member"));
      if (!wire) out.push(fc.constant(null), fc.constant([]));
    } else if (type === "boolean" || type === "array" || type === "object") {
      out.push(fc.constant(wire ? "not-json" : "text"));
      if (!wire) out.push(fc.constant(12));
    } else if (!wire) {
      // anyOf / oneOf / a type list: a value of none of the types is invalid for all of them.
      out.push(fc.constant({ unexpected: [] }), fc.constant("text"), fc.constant(true));
    }
    // What a value above is, for a schema that also allows it, is filtered by the caller.
    return out.length > 0 ? fc.oneof(...out) : undefined;
  }

  /** A body that breaks `schema`: one member invalid, a required one missing, an unknown one added. */
  invalidBodyOf(schema: Json): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const branches = ((s.oneOf ?? s.anyOf) as unknown[] | undefined)?.map((b) => this.resolve<Json>(b)) ?? [
      s,
    ];
    const mutations = branches.flatMap((branch) => {
      const valid = this.valuesOf(branch);
      const properties = Object.entries((branch.properties as Json | undefined) ?? {});
      const required = (branch.required as string[] | undefined) ?? [];
      const list: fc.Arbitrary<unknown>[] = [
        fc.constantFrom([], "text", 12, null),
        ...properties.flatMap(([name, p]) => {
          const bad = this.invalidOf(p);
          return bad ? [fc.tuple(valid, bad).map(([v, b]) => ({ ...(v as Json), [name]: b }))] : [];
        }),
        ...required.map((name) =>
          valid.map((v) => {
            const { [name]: _gone, ...rest } = v as Json;
            return rest;
          }),
        ),
      ];
      if (branch.additionalProperties === false)
        list.push(valid.map((v) => ({ ...(v as Json), unexpectedField: 1 })));
      return list;
    });
    return fc.oneof(...mutations);
  }
}

/** The integer range of a schema, BigInt, its format's included (`int32`, `int64`). */
function range(s: Json): { lo: bigint | undefined; hi: bigint | undefined } {
  const bound = (v: unknown, inclusive: boolean, up: boolean): bigint | undefined => {
    if (typeof v !== "number") return undefined;
    const whole = BigInt(up ? Math.ceil(v) : Math.floor(v));
    if (inclusive) return whole;
    return Number.isInteger(v) ? (up ? whole + 1n : whole - 1n) : whole;
  };
  let lo = bound(s.minimum, true, true) ?? bound(s.exclusiveMinimum, false, true);
  let hi = bound(s.maximum, true, false) ?? bound(s.exclusiveMaximum, false, false);
  if (s.format === "int64") {
    lo = lo === undefined || lo < INT64_MIN ? INT64_MIN : lo;
    hi = hi === undefined || hi > INT64_MAX ? INT64_MAX : hi;
  } else if (s.format === "int32") {
    lo = lo === undefined || lo < -(2n ** 31n) ? -(2n ** 31n) : lo;
    hi = hi === undefined || hi > 2n ** 31n - 1n ? 2n ** 31n - 1n : hi;
  }
  return { lo, hi };
}

/** A BigInt as a JSON-ready value: a number while exact, else the BigInt. */
const exact = (v: bigint): number | bigint =>
  v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;

function integers(s: Json): fc.Arbitrary<unknown> {
  const r = range(s);
  const lo = r.lo ?? -UNBOUNDED;
  const hi = r.hi ?? UNBOUNDED;
  const small = lo > 0n ? lo : 0n;
  const near = (from: bigint) => fc.bigInt({ min: from, max: from + 20n < hi ? from + 20n : hi });
  return fc
    .oneof(
      { weight: 4, arbitrary: near(small < hi ? small : lo) },
      { weight: 2, arbitrary: fc.bigInt({ min: lo, max: hi }) },
      { weight: 1, arbitrary: fc.constantFrom(lo, hi) },
    )
    .map(exact);
}

function numbers(s: Json): fc.Arbitrary<unknown> {
  const step = s.multipleOf as number | undefined;
  const min = (s.minimum as number | undefined) ?? (s.exclusiveMinimum as number | undefined) ?? -1e15;
  const max = (s.maximum as number | undefined) ?? (s.exclusiveMaximum as number | undefined) ?? 1e15;
  const ok = (v: number) =>
    !(typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum) &&
    !(typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum);
  if (step) {
    // k / (1 / step) is the shortest decimal of the multiple (0.07, not 0.07000000000000001).
    const per = Math.round(1 / step);
    const lo = Math.ceil(min * per);
    const hi = Math.floor(max * per);
    return fc
      .oneof(
        {
          weight: 4,
          arbitrary: fc.integer({ min: Math.max(lo, 0), max: Math.min(hi, Math.max(lo, 0) + 100_000) }),
        },
        { weight: 1, arbitrary: fc.constantFrom(lo, hi, lo + 1, hi - 1) },
        { weight: 1, arbitrary: fc.double({ min: lo, max: hi, noNaN: true }).map(Math.trunc) },
      )
      .map((k) => k / per)
      .filter(ok);
  }
  return fc
    .oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max, 0))
    .filter(ok)
    .map((v) => (Object.is(v, -0) ? 0 : v));
}

/** What a header can carry (RFC 9110 §5.5: visible ASCII and inner spaces). */
const headerSafe = (v: string) => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v);

function strings(s: Json, text: "any" | "header"): fc.Arbitrary<unknown> {
  const minLength = (s.minLength as number | undefined) ?? 0;
  const maxLength = (s.maxLength as number | undefined) ?? 1000;
  const fits = (v: string) => {
    const n = [...v].length;
    return n >= minLength && n <= maxLength && (text === "any" || headerSafe(v));
  };
  if (typeof s.pattern === "string") {
    const re = new RegExp(s.pattern as string, "u");
    return fc.stringMatching(re).filter(fits);
  }
  if (s.format === "email")
    return fc.emailAddress().filter((v) => v.length <= maxLength && (text === "any" || headerSafe(v)));
  if (s.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  const cap = Math.min(maxLength, minLength + 24);
  const units: fc.Arbitrary<string>[] =
    text === "header"
      ? [fc.string({ minLength, maxLength: cap })]
      : [
          fc.string({ minLength, maxLength: cap }),
          fc.string({ minLength, maxLength: cap, unit: "binary-ascii" }),
          fc.string({ minLength, maxLength: cap, unit: "grapheme" }),
        ];
  const edges = fc.constantFrom("x".repeat(Math.max(minLength, 1)), "é".repeat(Math.min(maxLength, 300)));
  return fc.oneof(...units, edges).filter(fits);
}
