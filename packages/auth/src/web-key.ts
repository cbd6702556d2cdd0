import {
  type CryptoKey,
  errors,
  exportJWK,
  importJWK,
  importPKCS8,
  importSPKI,
  importX509,
  type JWK,
  type JWTVerifyGetKey,
} from "jose";
import type { KeyKind } from "./algorithms.js";
import { fromBase64 } from "./bytes.js";

/**
 * A Bearer public key read where there is no `node:crypto` (workerd, browsers): what kind of key
 * it is, known synchronously from its JWK members, its `CryptoKey` algorithm or its DER's
 * AlgorithmIdentifier (RFC 5280 §4.1.1.2), so a key that fits none of the algorithms is refused
 * at construction as on Node.js; and how to import it with Web Crypto, which is asynchronous and
 * so happens on first use, once per algorithm.
 */
export interface PortablePublicKey {
  kind: KeyKind;
  /** The public `CryptoKey` for `alg`; rejects when Web Crypto refuses the key. */
  load(alg: string): Promise<CryptoKey>;
}

/** Web Crypto's curve names (RFC 7518 §6.2.1.1 `crv`) as Node.js names them. */
const CURVES: Record<string, string> = { "P-256": "prime256v1", "P-384": "secp384r1", "P-521": "secp521r1" };

/**
 * `key` (`bearer.key` as given) as a {@link PortablePublicKey}, or `undefined` for anything that
 * is not a public JWK, an extractable private one, a PEM (SPKI public key, X.509 certificate,
 * PKCS #8 private key) or an asymmetric `CryptoKey` (a private one extractable: its public half
 * is read from its JWK).
 */
export function portablePublicKey(key: unknown): PortablePublicKey | undefined {
  if (typeof key === "string") return pemKey(key);
  if (isCryptoKey(key)) return cryptoKeyKey(key);
  if (typeof key === "object" && key !== null && !(key instanceof Uint8Array)) {
    const jwk = publicJwk(key as JWK);
    if (jwk === undefined) return undefined;
    const kind = jwkKind(jwk);
    return kind && { kind, load: (alg) => importJWK(jwk, alg) as Promise<CryptoKey> };
  }
  return undefined;
}

/**
 * What jose verifies with for `key`: a function jose calls with each token's header, importing
 * the key for the token's algorithm once (`fits` says whether it may verify it at all; a token
 * it does not fit fails as a signature no key verifies). A key Web Crypto refuses is the error
 * `refused` makes, thrown for every token: a server error, never a 401 that blames the client.
 */
export function portableVerificationKey(
  key: PortablePublicKey,
  fits: (alg: string) => boolean,
  refused: (alg: string, cause: unknown) => Error,
): JWTVerifyGetKey {
  return keyPerAlgorithm(
    (alg) =>
      key.load(alg).catch((cause: unknown) => {
        throw refused(alg, cause);
      }),
    fits,
  );
}

/**
 * What jose verifies with: a function jose calls with each token's header, answering `load(alg)`
 * for the token's algorithm, loaded once per algorithm (a `CryptoKey` serves one algorithm). jose
 * asks only for an algorithm of its `algorithms` (it refuses any other before), so the key holds
 * one import per algorithm at most; a token whose algorithm the key does not fit (`fits`) fails as
 * a signature no key verifies.
 */
export function keyPerAlgorithm(
  load: (alg: string) => Promise<CryptoKey>,
  fits: (alg: string) => boolean,
): JWTVerifyGetKey {
  const imported = new Map<string, Promise<CryptoKey>>();
  return function importedKey(header) {
    const { alg } = header;
    if (alg === undefined || !fits(alg)) throw new errors.JWSSignatureVerificationFailed();
    let known = imported.get(alg);
    if (known === undefined) {
      known = load(alg);
      imported.set(alg, known);
    }
    return known;
  };
}

/** Whether `value` is a Web Crypto `CryptoKey` (of this realm or another, as jose tells one). */
export function isCryptoKey(value: unknown): value is CryptoKey {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === "CryptoKey"
  );
}

function cryptoKeyKey(key: CryptoKey): PortablePublicKey | undefined {
  if (key.type === "secret" || (key.type === "private" && !key.extractable)) return undefined;
  const algorithm = key.algorithm as { name: string; namedCurve?: string };
  const { name } = algorithm;
  const kind: KeyKind = name.startsWith("RSA")
    ? { type: "rsa" }
    : name === "ECDSA" || name === "ECDH"
      ? { type: "ec", curve: CURVES[algorithm.namedCurve ?? ""] }
      : { type: name.toLowerCase() };
  // An extractable key is imported anew for each algorithm, as on Node.js (a CryptoKey serves
  // one); a public one that is not goes to jose as it is.
  const load = async (alg: string) => {
    if (!key.extractable) return key;
    const jwk = publicJwk(await exportJWK(key));
    if (jwk === undefined) throw new TypeError("the key's JWK has no public members");
    return (await importJWK(jwk, alg)) as CryptoKey;
  };
  return { kind, load };
}

/** A JWK's public members only (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2), or `undefined`. */
function publicJwk(jwk: JWK): JWK | undefined {
  const text = (value: unknown): value is string => typeof value === "string" && value !== "";
  if (jwk.kty === "RSA" && text(jwk.n) && text(jwk.e)) return { kty: "RSA", n: jwk.n, e: jwk.e };
  if (jwk.kty === "EC" && text(jwk.crv) && text(jwk.x) && text(jwk.y))
    return { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y };
  if (jwk.kty === "OKP" && text(jwk.crv) && text(jwk.x)) return { kty: "OKP", crv: jwk.crv, x: jwk.x };
  return undefined;
}

function jwkKind(jwk: JWK): KeyKind | undefined {
  if (jwk.kty === "RSA") return { type: "rsa" };
  if (jwk.kty === "EC") return { type: "ec", curve: CURVES[jwk.crv ?? ""] };
  return { type: (jwk.crv ?? "").toLowerCase() };
}

/** RFC 7468 §2: one PEM block, its label and its base64 (RFC 7468 §3 lax: lines of any length). */
const PEM = /^-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n\t ]+)-----END \1-----$/;

function pemKey(text: string): PortablePublicKey | undefined {
  const match = PEM.exec(text.trim());
  const der = match?.[2] && fromBase64(match[2].replace(/[\r\n\t ]/g, ""));
  if (!match || !der) return undefined;
  const label = match[1];
  const outer = tlv(der, 0);
  if (outer === undefined || outer.tag !== SEQUENCE) return undefined;
  const parts = children(der, outer);
  let algorithm: Tlv | undefined;
  let load: (alg: string) => Promise<CryptoKey>;
  if (label === "PUBLIC KEY") {
    // RFC 5280 §4.1: SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, ... }
    algorithm = parts[0];
    load = (alg) => importSPKI(text, alg);
  } else if (label === "CERTIFICATE") {
    // RFC 5280 §4.1: TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature,
    // issuer, validity, subject, subjectPublicKeyInfo, ... }
    const tbs = parts[0] && parts[0].tag === SEQUENCE ? children(der, parts[0]) : [];
    const spki = tbs[tbs[0]?.tag === 0xa0 ? 6 : 5];
    algorithm = spki && spki.tag === SEQUENCE ? children(der, spki)[0] : undefined;
    load = (alg) => importX509(text, alg);
  } else if (label === "PRIVATE KEY") {
    // RFC 5208 §5: PrivateKeyInfo ::= SEQUENCE { version, privateKeyAlgorithm, privateKey, ... }
    algorithm = parts[1];
    load = async (alg) => {
      const jwk = publicJwk(await exportJWK(await importPKCS8(text, alg, { extractable: true })));
      if (jwk === undefined) throw new TypeError("the key's JWK has no public members");
      return (await importJWK(jwk, alg)) as CryptoKey;
    };
  } else {
    return undefined;
  }
  const kind = algorithm && algorithm.tag === SEQUENCE ? algorithmKind(der, algorithm) : undefined;
  return kind && { kind, load };
}

const SEQUENCE = 0x30;
const OID = 0x06;

/** One DER element (X.690 §8.1): its tag and where its contents start and end. */
interface Tlv {
  tag: number;
  start: number;
  end: number;
}

function tlv(der: Uint8Array, at: number): Tlv | undefined {
  const tag = der[at];
  let length = der[at + 1];
  let start = at + 2;
  if (tag === undefined || length === undefined) return undefined;
  if (length & 0x80) {
    // X.690 §8.1.3.5: the long form, in at most 4 octets here (a key is far below 4 GiB).
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4 || start + octets > der.length) return undefined;
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + (der[start + i] as number);
    start += octets;
  }
  const end = start + length;
  return end > der.length ? undefined : { tag, start, end };
}

function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const found: Tlv[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const next = tlv(der, at);
    if (next === undefined || next.end > parent.end) return [];
    found.push(next);
    at = next.end;
  }
  return found;
}

/** The object identifiers of the keys a JWS verifies with, as DER contents in hex. */
const KEY_OIDS: Record<string, string> = {
  "2a864886f70d010101": "rsa", // rsaEncryption, RFC 8017 Appendix C
  "2a864886f70d01010a": "rsa-pss", // id-RSASSA-PSS, RFC 8017 Appendix C
  "2a8648ce3d0201": "ec", // id-ecPublicKey, RFC 5480 §2.1.1
  "2b6570": "ed25519", // id-Ed25519, RFC 8410 §3
  "2b6571": "ed448", // id-Ed448, RFC 8410 §3
};

/** RFC 5480 §2.1.1.1 named curves, as Node.js names them. */
const CURVE_OIDS: Record<string, string> = {
  "2a8648ce3d030107": "prime256v1",
  "2b81040022": "secp384r1",
  "2b81040023": "secp521r1",
};

/** An AlgorithmIdentifier's key kind (RFC 5280 §4.1.1.2: SEQUENCE { algorithm OID, parameters }). */
function algorithmKind(der: Uint8Array, algorithm: Tlv): KeyKind | undefined {
  const [oid, parameters] = children(der, algorithm);
  if (oid?.tag !== OID) return undefined;
  const type = KEY_OIDS[hex(der, oid)];
  if (type !== "ec") return type === undefined ? { type: "unknown" } : { type };
  return { type, curve: parameters?.tag === OID ? CURVE_OIDS[hex(der, parameters)] : undefined };
}

function hex(der: Uint8Array, { start, end }: Tlv): string {
  let out = "";
  for (let i = start; i < end; i++) out += (der[i] as number).toString(16).padStart(2, "0");
  return out;
}
