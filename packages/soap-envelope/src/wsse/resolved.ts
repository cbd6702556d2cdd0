import type { X509Certificate } from "node:crypto";

/** The `wsSecurity` option (`WsSecurityOptions`), checked and resolved once. */
export interface ResolvedWsSecurity {
  timestamp:
    | { required: boolean; clockSkewMs: number; maxAgeMs: number; requireExpires: boolean }
    | undefined;
  replay: { maxEntries: number } | undefined;
  signature: ResolvedSignature | undefined;
}

export interface ResolvedSignature {
  trusted: readonly X509Certificate[];
  required: boolean;
  body: boolean;
  timestamp: boolean;
  /** Header blocks that must be signed, as Clark names. */
  headers: readonly string[];
  maxReferences: number;
  maxTransforms: number;
  maxSignatureBytes: number;
  maxTokenBytes: number;
}
