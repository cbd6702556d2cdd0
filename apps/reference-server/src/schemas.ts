import { z } from "zod";
import { MAX_MINOR, toMinor } from "./db/money.js";

/**
 * Every request payload, validated with zod and turned into the OpenAPI document, so the
 * document cannot drift from what the server accepts. Type and shape errors are 400s with field
 * errors; business rules (a positive salary, an existing department) are checked afterwards and
 * answered with 422.
 */
/**
 * Characters a text field refuses, written once as the inside of a character class that the
 * server's check and the document's `pattern` both use. The document's patterns are read by every
 * schema tool a client runs: ECMA-262 engines with the `u` flag (ajv) and without it (the `regex`
 * format check of ajv-formats, which Spectral runs), and Rust's `regex` (jsonschema-rs). So a
 * class names code points with `\uXXXX` escapes of Unicode scalar values only: Rust refuses an
 * escape of a surrogate, and no ECMA-262 class can write a range past U+FFFF that compiles both
 * with and without `u`.
 */
interface Refused {
  /** The inside of a `[...]` class, each code point a `\uXXXX` escape of a scalar value. */
  readonly chars: string;
  /** The server's check: `chars`, and what only a UTF-16 string can hold (a lone surrogate) where `loneSurrogates`. */
  readonly re: RegExp;
  /** The message for a value holding `found`. */
  readonly message: (found: string) => string;
}
const refused = (chars: string, message: (found: string) => string, loneSurrogates = false): Refused => ({
  chars,
  re: new RegExp(loneSurrogates ? `[${chars}\\p{Cs}]` : `[${chars}]`, "u"),
  message,
});

/** NUL cannot be stored in a PostgreSQL text column, and has no place in these fields anyway. */
const NUL = refused("\\u0000", () => "must not contain NUL characters");

/**
 * What XML 1.0 `Char` leaves out: C0 controls but tab, LF and CR, surrogates, U+FFFE and U+FFFF;
 * no character reference can write them either (§4.1, WFC: Legal Character). A field the SOAP
 * contract carries refuses them, or SOAP could not send what REST stored.
 *
 * The document's pattern names the scalar values alone: a JSON Schema string is Unicode text, a
 * sequence of scalar values, which has no lone surrogate to refuse. JSON's `\uD800` escape can
 * still write one; the server's check refuses it (matched by code point, with the `u` flag, a
 * surrogate is a lone one: a pair is one character past U+FFFF), and the field's description
 * says so.
 * @see https://www.w3.org/TR/xml/#NT-Char
 * @see https://www.rfc-editor.org/rfc/rfc7493#section-2.1 I-JSON: no string holds a surrogate that is not part of a pair
 */
const NOT_XML_CHAR = refused(
  "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF",
  (found) =>
    `must not contain U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}, which is not an XML 1.0 character`,
  true,
);

/**
 * What `String.prototype.trim()` takes away: ECMA-262's WhiteSpace and LineTerminator, written
 * out, since `\s` means more to Rust's `regex` (Unicode's White_Space, U+0085 among it).
 * @see https://tc39.es/ecma262/#sec-white-space
 */
const TRIMMED =
  "\\t\\n\\u000B\\u000C\\r\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF";

/**
 * The zod check and the document's patterns (unanchored in JSON Schema, hence `^…$`) of `r`. The
 * check runs before `trim()`, which would take a leading U+000B or U+000C away unseen while the
 * pattern refuses it.
 */
function checksOf(r: Refused) {
  return {
    check: (value: string, ctx: z.RefinementCtx) => {
      const found = r.re.exec(value)?.[0];
      if (found !== undefined) ctx.addIssue({ code: "custom", message: r.message(found) });
    },
    /** Every string the field takes. */
    pattern: `^[^${r.chars}]*$`,
    /** …and, for text that must say something, a character besides white space (what `trim()` drops). */
    notBlank: `^[^${r.chars}]*[^${TRIMMED}${r.chars}][^${r.chars}]*$`,
  };
}
/**
 * At most `max` characters as the document's `maxLength` counts them, in code points (JSON Schema
 * Validation 2020-12 §6.3.1), not UTF-16 units (`String.length`, which counts an emoji twice), and
 * before trimming: a value the document calls too long is never taken because it ends in spaces.
 */
const chars = (max: number) =>
  z
    .string()
    .refine((v) => v.length <= max || [...v].length <= max, `must be at most ${max} characters`)
    .meta({ maxLength: max });
const noNul = checksOf(NUL);
const plain = (max: number) => chars(max).superRefine(noNul.check).meta({ pattern: noNul.pattern });
/** Text that must say something, refusing NUL, or what `refusing` names. */
const text = (max = 200, refusing = NUL) => {
  const { check, notBlank } = checksOf(refusing);
  return (
    chars(max)
      .superRefine(check)
      .trim()
      .min(1, "must not be empty")
      // `min(1)` counts the trimmed value; the document says it with the pattern.
      .meta({ minLength: 1, pattern: notBlank })
  );
};
/**
 * Like {@link text}, but may be empty: for fields the service itself leaves empty, which a client
 * must be able to PUT back as it read them (spec 4.1 rule 2, part 9).
 */
const maybeEmpty = (max: number) =>
  chars(max).superRefine(noNul.check).trim().meta({ pattern: noNul.pattern });
/** Counts (stock) are 32-bit `integer` columns: a larger number is not a database error. */
export const INT_MAX = 2_147_483_647;
/**
 * Ids are 64-bit, but a JSON number in a request body is read as a double: past 2^53 − 1 it
 * would arrive rounded, naming another resource, so it is refused rather than guessed at.
 */
const id = z
  .number()
  .int("must be an integer")
  .positive("must be a positive integer")
  .max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`);
/**
 * Money is stored in integer minor units (db/money.ts). An amount is a JSON number in the major
 * unit with at most `digits` fraction digits (2 for EUR): `5e-11`, `0.001` or `1e-7` is a 400,
 * never rounded to a cent nobody sent. Beyond 10^12 is refused too.
 */
export const MONEY_MAX = 1e12;
const money = (digits = 2) => {
  // What the minor units can hold bounds it too: at 3 digits 10^12 is 10^15 units, past MAX_MINOR.
  const max = Math.min(MONEY_MAX, MAX_MINOR / 10 ** digits);
  return (
    z
      .number()
      .min(-max, `must be at least -${max === MONEY_MAX ? "10^12" : max}`)
      .max(max, `must be at most ${max === MONEY_MAX ? "10^12" : max}`)
      .refine((v) => toMinor(v, digits) !== undefined, `must have at most ${digits} decimal places`)
      // The refinement above as JSON Schema sees it (zod's own multipleOf lets 5e-11 through).
      .meta({ multipleOf: 10 ** -digits })
  );
};
/**
 * An e-mail address as the document's pattern spells it, which every validator of `format: email`
 * also takes: a dot-atom local part (RFC 5322 §3.4.1, without its rarer characters) and a domain
 * of RFC 1035 labels (letters, digits, inner hyphens, at most 63 each) ending in a letters-only
 * top-level label. `a@b-.com` and `a..b@c.de` are refused.
 */
const EMAIL =
  /^[A-Za-z0-9_'+-]+(?:\.[A-Za-z0-9_'+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const email = z.email({ pattern: EMAIL, error: "must be an e-mail address" }).max(254);

export const EmployeeV1Input = z
  .strictObject({
    id: id.optional().describe("Ignored when equal to the path id; any other value is a 400"),
    name: text().describe("Full name; version 2 splits it into firstName and lastName"),
    email,
    department: text(100).describe("Name of an existing department"),
    city: text(100),
    salary: money().describe("Yearly salary; must be positive (422 otherwise)").meta({ exclusiveMinimum: 0 }),
    managerId: id.nullable().optional().describe("Id of another employee"),
  })
  .meta({ id: "EmployeeInput" });

export const EmployeeV2Input = z
  .strictObject({
    id: id.optional(),
    firstName: text(100),
    // Empty for a one-word name written through version 1 (`"name": "Plato"`): what version 2
    // reads must PUT back (spec part 9: existing versions stay compatible).
    lastName: maybeEmpty(100).describe("Empty for a one-word name"),
    email,
    department: text(100),
    city: text(100),
    salary: money().describe("Yearly salary; must be positive (422 otherwise)").meta({ exclusiveMinimum: 0 }),
    managerId: id.nullable().optional(),
  })
  .meta({ id: "EmployeeV2Input" });

export const DepartmentInput = z
  .strictObject({ name: text(100), city: text(100) })
  .meta({ id: "DepartmentInput" });

export const ProjectInput = z
  .strictObject({
    name: text(),
    department: text(100).describe("Name of an existing department"),
    budget: money().describe("Must not be negative (422 otherwise)").meta({ minimum: 0 }),
    status: z.enum(["ACTIVE", "DONE"]),
  })
  .meta({ id: "ProjectInput" });

export const CategoryInput = z
  .strictObject({ name: text(100), description: plain(1000) })
  .meta({ id: "CategoryInput" });

export const ProductInput = z
  .strictObject({
    name: text(),
    sku: z.string().regex(/^[A-Z0-9-]{3,32}$/, "must be 3 to 32 of A-Z, 0-9 and -"),
    categoryId: id,
    price: money().describe("Must be positive (422 otherwise)").meta({ exclusiveMinimum: 0 }),
    stock: z
      .number()
      .int("must be an integer")
      .min(-INT_MAX, `must be at least -${INT_MAX}`)
      .max(INT_MAX, `must be at most ${INT_MAX}`)
      .describe("Must not be negative (422 otherwise)")
      .meta({ minimum: 0 }),
  })
  .meta({ id: "ProductInput" });

export const ReviewInput = z
  .strictObject({
    author: text(100),
    rating: z.number().int("must be an integer").min(1, "must be from 1 to 5").max(5, "must be from 1 to 5"),
    comment: plain(2000),
  })
  .meta({ id: "ReviewInput" });

export const CustomerInput = z
  .strictObject({
    // The SOAP contract's Customer carries the name (and the e-mail address, whose pattern allows
    // only ASCII): what REST stores there, getCustomer must be able to send.
    name: text(200, NOT_XML_CHAR).describe(
      "XML 1.0 characters only, as the SOAP contract's Customer carries the name: no C0 control but tab, LF and CR, no U+FFFE or U+FFFF, and no lone surrogate (a JSON `\\uD800` escape not part of a pair)",
    ),
    email,
    // The SOAP contract's Customer has no city: customers createCustomer makes have an empty one.
    city: maybeEmpty(100).describe("Empty for a customer created over SOAP"),
  })
  .meta({ id: "CustomerInput" });

export const UserInput = z
  .strictObject({
    username: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]{2,31}$/, "must be 3 to 32 lowercase letters, digits, _ . -"),
    email,
    role: z.enum(["admin", "customer"]),
    customerId: id.nullable().optional(),
  })
  .meta({ id: "UserInput" });

const OrderLine = z.strictObject({
  productId: id,
  quantity: z
    .number()
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(1000, "must be at most 1000"),
});

export const OrderInput = z
  .strictObject({
    customerId: id,
    items: z.array(OrderLine).min(1, "must contain at least one item").max(100),
  })
  .meta({ id: "OrderInput" });

export const OrderPatch = z
  .strictObject({
    status: z.enum(["SHIPPED", "CANCELLED"]).describe("PENDING → PAID happens by POST /payments"),
    carrier: text(50).optional(),
    trackingNumber: text(50).optional(),
  })
  .meta({ id: "OrderPatch" });

export const PaymentInput = z
  .strictObject({
    orderId: id,
    amount: money().describe("Must equal the order's total (422 otherwise)"),
    method: z.enum(["card", "sepa", "paypal"]),
  })
  .meta({ id: "PaymentInput" });

export const CartItemInput = OrderLine.meta({ id: "CartItemInput" });
export const CartInput = z.strictObject({ items: z.array(OrderLine).max(100) }).meta({ id: "CartInput" });

export const AccountInput = z
  .strictObject({
    number: text(40),
    owner: text(100),
    currency: z.string().regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR"),
    balance: money(3)
      .describe(
        "Opening balance; must not be negative and have at most the currency's minor-unit digits (EUR 2, JPY 0; 422 otherwise)",
      )
      .meta({ minimum: 0 })
      .optional(),
  })
  .meta({ id: "AccountInput" });

export const TransferInput = z
  .strictObject({
    fromAccountId: id,
    toAccountId: id,
    amount: money(3)
      .describe(
        "In the accounts' currency, with at most its minor-unit digits (EUR 2); must be positive (422 otherwise)",
      )
      .meta({ exclusiveMinimum: 0 }),
  })
  .meta({ id: "TransferInput" });

/** Every request schema, by the name it has in the OpenAPI document. */
export const REQUEST_SCHEMAS = {
  EmployeeInput: EmployeeV1Input,
  EmployeeV2Input,
  DepartmentInput,
  ProjectInput,
  CategoryInput,
  ProductInput,
  ReviewInput,
  CustomerInput,
  UserInput,
  OrderInput,
  OrderPatch,
  PaymentInput,
  CartItemInput,
  CartInput,
  AccountInput,
  TransferInput,
} as const;
