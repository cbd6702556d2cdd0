import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

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

function scryptAsync(
  password: string,
  salt: Buffer,
  keylen: number,
  options: ScryptOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, keylen, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

function scryptOptions(logN: number, r: number, p: number): ScryptOptions {
  return { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 * 1024 };
}

/**
 * Hashes a password with scrypt (`node:crypto`) into a self-describing PHC-style string:
 * `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64, no padding). Store that string.
 *
 * @example
 * const stored = await hashPassword("correct horse battery staple");
 * @see https://www.rfc-editor.org/rfc/rfc7914 (scrypt)
 */
export async function hashPassword(password: string, options: PasswordHashOptions = {}): Promise<string> {
  if (typeof password !== "string") throw new TypeError("hashPassword: password must be a string");
  const logN = options.logN ?? 15;
  const r = options.r ?? 8;
  const p = options.p ?? 1;
  if (!Number.isInteger(logN) || logN < 1 || logN > 24)
    throw new TypeError("hashPassword: logN must be 1..24");
  if (!Number.isInteger(r) || r < 1 || !Number.isInteger(p) || p < 1) {
    throw new TypeError("hashPassword: r and p must be positive integers");
  }
  const salt = randomBytes(SALT_LENGTH);
  const hash = await scryptAsync(password, salt, KEY_LENGTH, scryptOptions(logN, r, p));
  return `$scrypt$ln=${logN},r=${r},p=${p}$${salt.toString("base64").replace(/=+$/, "")}$${hash.toString("base64").replace(/=+$/, "")}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

// A fixed hash checked when the user does not exist, so "no such user" costs as much time as
// "wrong password" and response times do not reveal which user names exist.
const DUMMY_SALT = Buffer.alloc(SALT_LENGTH, 7);

/**
 * Checks a password against a {@link hashPassword} string in constant time
 * (`crypto.timingSafeEqual`). Pass `undefined` as `stored` for an unknown user: the same scrypt
 * work is done and the result is `false`, so timing does not reveal whether the user exists.
 * A malformed `stored` string yields `false`.
 *
 * @example
 * const user = await users.find(username);
 * if (!(await verifyPassword(password, user?.passwordHash))) return null;
 * @see https://www.rfc-editor.org/rfc/rfc7914
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  if (typeof password !== "string") return false;
  const match = typeof stored === "string" ? PHC.exec(stored) : null;
  if (!match) {
    await scryptAsync(password, DUMMY_SALT, KEY_LENGTH, scryptOptions(15, 8, 1));
    return false;
  }
  const logN = Number(match[1]);
  const r = Number(match[2]);
  const p = Number(match[3]);
  if (logN < 1 || logN > 24 || r < 1 || p < 1) return false;
  const salt = Buffer.from(match[4] ?? "", "base64");
  const expected = Buffer.from(match[5] ?? "", "base64");
  if (expected.length < 16) return false;
  const actual = await scryptAsync(password, salt, expected.length, scryptOptions(logN, r, p));
  return timingSafeEqual(actual, expected);
}
