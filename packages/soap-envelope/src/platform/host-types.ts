import type { X509Certificate } from "node:crypto";
import type { readSignature, verifySignature } from "../wsse/signature.js";

/**
 * A folder tree the contract's documents are read from: the file system (`wsdl` a path) or the
 * documents given in memory (`contract.documents`), with the path arithmetic that goes with it.
 */
export interface DocumentTree {
  resolve(...paths: string[]): string;
  dirname(path: string): string;
  relative(from: string, to: string): string;
  normalize(path: string): string;
  join(...paths: string[]): string;
  isAbsolute(path: string): boolean;
  sep: string;
  /** Where relative paths start. */
  cwd(): string;
  /** The document's text at `path` (absolute); throws an `Error` saying why it cannot be. */
  read(path: string): string;
  /** `path` (absolute) as messages name it. */
  shown(path: string): string;
}

/** X.509 signature verification: XML-DSig with exclusive C14N, and the certificates it trusts. */
export interface SignatureVerifier {
  trustedCertificates(value: unknown): X509Certificate[];
  readSignature: typeof readSignature;
  verifySignature: typeof verifySignature;
}

/**
 * What the runtime offers beyond the Web platform. On Node.js, Bun and Deno (the main build) both;
 * in the build for workerd, workers and browsers (the `workerd`, `worker` and `browser` conditions
 * of package.json `exports`) neither: a contract comes from `contract.documents`, and a
 * `wsSecurity.signature` option is refused at construction.
 */
export interface Host {
  /** The file system; undefined where there is none. */
  files: DocumentTree | undefined;
  /** X.509 signature verification; undefined where there is none. */
  signatures: SignatureVerifier | undefined;
}
