import { scryptAsync as portableScrypt } from "@noble/hashes/scrypt";
import { equalBytes, fromBase64, randomBytes, toBase64 } from "./bytes.js";
import { nodeCrypto } from "./node-crypto.js";
import { checkOptions, optionError } from "./options.js";

/** Cost parameters of {@link hashPassword}. */
export interface PasswordHashOptions {
  /**
   * log2 of scrypt's CPU/memory cost N.
   * @default 15 (N = 32768, 32 MiB with r = 8)
   */
  logN?: number;
  /**
   * scrypt block size r.
   * @default 8
   */
  r?: number;
  /**
   * scrypt parallelisation p.
   * @default 1
   */
  p?: number;
}

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

/** scrypt's parameters (RFC 7914 §2) and the memory it may use. */
interface ScryptParameters {
  N: number;
  r: number;
  p: number;
  maxmem: number;
}

/**
 * scrypt (RFC 7914) of the NFC form of `password` (UTF-8): Node's, on the libuv threadpool, where
 * the runtime has `node:crypto`; else `@noble/hashes`' on this thread, which yields to the event
 * loop every few milliseconds. Both compute RFC 7914's function: the same bytes, so a hash made on
 * one runtime verifies on another.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7914#section-6
 */
function scryptAsync(
  password: string,
  salt: Uint8Array,
  keylen: number,
  options: ScryptParameters,
): Promise<Uint8Array> {
  const normalized = password.normalize("NFC");
  const node = nodeCrypto;
  if (node === undefined) return portableScrypt(normalized, salt, { ...options, dkLen: keylen });
  return new Promise((resolve, reject) => {
    node.scrypt(normalized, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function scryptOptions(logN: number, r: number, p: number): ScryptParameters {
  return { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 * 1024 };
}

/** scrypt's cost parameters, resolved. */
interface Cost {
  logN: number;
  r: number;
  p: number;
}

const DEFAULT_COST: Readonly<Cost> = Object.freeze({ logN: 15, r: 8, p: 1 });

/** The scrypt cost; a refused field is `passwordHash.<field>` (`ERR_SVC_AUTH_PASSWORD_HASH_LOG_N`). */
function resolveCost(options: PasswordHashOptions | undefined): Cost {
  if (options === undefined) return DEFAULT_COST;
  checkOptions(
    options,
    Object.keys({ logN: 0, r: 0, p: 0 } satisfies Record<keyof PasswordHashOptions, 0>),
    "passwordHash",
    "an object { logN, r, p }",
  );
  const name = (field: string) => `passwordHash.${field}`;
  const logN = options.logN ?? DEFAULT_COST.logN;
  const r = options.r ?? DEFAULT_COST.r;
  const p = options.p ?? DEFAULT_COST.p;
  if (!Number.isInteger(logN) || logN < 1 || logN > 24)
    throw optionError(name("logN"), logN, "an integer from 1 to 24");
  if (!Number.isInteger(r) || r < 1 || r > 999) throw optionError(name("r"), r, "an integer from 1 to 999");
  if (!Number.isInteger(p) || p < 1 || p > 999) throw optionError(name("p"), p, "an integer from 1 to 999");
  return { logN, r, p };
}

const b64 = (bytes: Uint8Array) => toBase64(bytes).replace(/=+$/, "");

/**
 * Hashes a password with scrypt (Node's where the runtime has `node:crypto`) into a self-describing PHC-style string:
 * `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64, no padding). Store that string.
 *
 * @example
 * const stored = await hashPassword("correct horse battery staple");
 * @see https://www.rfc-editor.org/rfc/rfc7914 (scrypt)
 */
export async function hashPassword(password: string, options?: PasswordHashOptions): Promise<string> {
  if (typeof password !== "string") throw new TypeError("hashPassword: password must be a string");
  const { logN, r, p } = resolveCost(options);
  const salt = randomBytes(SALT_LENGTH);
  const hash = await scryptAsync(password, salt, KEY_LENGTH, scryptOptions(logN, r, p));
  return `$scrypt$ln=${logN},r=${r},p=${p}$${b64(salt)}$${b64(hash)}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

// The salt of the stand-in verification for an unknown user. Its value does not matter: the
// work (N, r, p, salt and key length) is what must match a real user's verification.
const DUMMY_SALT = new Uint8Array(SALT_LENGTH).fill(7);

async function verifyWith(password: string, stored: string | undefined, dummy: Cost): Promise<boolean> {
  if (typeof password !== "string") return false;
  const match = typeof stored === "string" ? PHC.exec(stored) : null;
  if (!match) {
    // An unknown user (or an unusable stored value) costs exactly what a known user costs when
    // `dummy` holds the parameters the stored hashes use: same N, r, p, salt and key length.
    // With a cheaper or dearer stand-in, response times tell which user names exist.
    await scryptAsync(password, DUMMY_SALT, KEY_LENGTH, scryptOptions(dummy.logN, dummy.r, dummy.p));
    return false;
  }
  const logN = Number(match[1]);
  const r = Number(match[2]);
  const p = Number(match[3]);
  if (logN < 1 || logN > 24 || r < 1 || p < 1) return false;
  const salt = fromBase64(match[4] ?? "");
  const expected = fromBase64(match[5] ?? "");
  if (salt === undefined || expected === undefined || expected.length < 16) return false;
  const actual = await scryptAsync(password, salt, expected.length, scryptOptions(logN, r, p));
  return equalBytes(actual, expected);
}

/**
 * Checks a password against a {@link hashPassword} string in constant time. Pass `undefined` as
 * `stored` for an unknown user: a stand-in scrypt verification runs with the cost in `options` (the defaults of {@link hashPassword} when
 * omitted) and the result is `false`. **Pass the same `options` you hash with**, so that an
 * unknown user costs exactly what a known one does and timing does not reveal which user names
 * exist; {@link createPasswordHasher} keeps the two together. A malformed `stored` yields `false`.
 *
 * @example
 * const user = await users.find(username);
 * if (!(await verifyPassword(password, user?.passwordHash, { logN: 12 }))) return null;
 * @see https://www.rfc-editor.org/rfc/rfc7914
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Authentication_Cheat_Sheet.html#authentication-responses
 */
export function verifyPassword(
  password: string,
  stored: string | undefined,
  options?: PasswordHashOptions,
): Promise<boolean> {
  let cost: Cost;
  try {
    cost = resolveCost(options);
  } catch (err) {
    return Promise.reject(err);
  }
  return verifyWith(password, stored, cost);
}

/**
 * {@link hashPassword} and {@link verifyPassword} bound to one scrypt cost, validated once.
 * `verify(password, undefined)` (an unknown user) then does exactly the work of checking a hash
 * made by `hash`, so known and unknown user names take the same time.
 *
 * @example
 * const passwords = createPasswordHasher({ logN: 15 });
 * const stored = await passwords.hash("correct horse battery staple");
 * const ok = await passwords.verify(attempt, user?.passwordHash); // user may be undefined
 * @see https://www.rfc-editor.org/rfc/rfc7914
 */
export interface PasswordHasher {
  /** The resolved cost every `hash` uses and every unknown-user `verify` spends. */
  readonly cost: Readonly<Required<PasswordHashOptions>>;
  /** {@link hashPassword} with this cost. */
  hash(password: string): Promise<string>;
  /** {@link verifyPassword} with this cost for the unknown-user stand-in. */
  verify(password: string, stored: string | undefined): Promise<boolean>;
}

/**
 * Creates a {@link PasswordHasher}. Refused options throw a `TypeError` with a `code`
 * (`ERR_SVC_AUTH_PASSWORD_HASH_LOG_N`, `_R`, `_P`).
 *
 * @example
 * const passwords = createPasswordHasher({ logN: 12 }); // cheaper: demo accounts only
 * const principal = (await passwords.verify(password, users.get(name)?.hash)) ? { id: name } : null;
 * @see https://www.rfc-editor.org/rfc/rfc7914
 */
export function createPasswordHasher(options: PasswordHashOptions = {}): PasswordHasher {
  const cost = Object.freeze({ ...resolveCost(options) });
  return {
    cost,
    hash: (password) => hashPassword(password, cost),
    verify: (password, stored) => verifyWith(password, stored, cost),
  };
}
