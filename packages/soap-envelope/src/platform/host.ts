import * as path from "node:path";
import { readXmlFile } from "../wsdl/files.js";
import { trustedCertificates } from "../wsse/certificates.js";
import { readSignature, verifySignature } from "../wsse/signature.js";
import type { Host } from "./host-types.js";

/**
 * The host of the main build (Node.js, Bun, Deno): contract files read with `node:fs`, X.509
 * signatures verified with `node:crypto` and xml-crypto's exclusive C14N. The build for workerd,
 * workers and browsers replaces this module with `host-web.ts` (tsup.config.ts), so that build
 * imports no Node.js module.
 */
export const host: Host = {
  files: {
    resolve: path.resolve,
    dirname: path.dirname,
    relative: path.relative,
    normalize: path.normalize,
    join: path.join,
    isAbsolute: path.isAbsolute,
    sep: path.sep,
    cwd: () => process.cwd(),
    read: readXmlFile,
    shown: (file) => file,
  },
  signatures: { trustedCertificates, readSignature, verifySignature },
};
