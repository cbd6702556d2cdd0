import { basename, dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readXmlFile, writeTextFile } from "./wsdl/files.js";
import { generateTypes } from "./wsdl/generate-types.js";

/** The command line of `svc-soap-types`, printed by `--help` and with a usage error. */
export const USAGE = `Usage: svc-soap-types <contract.wsdl> [-o <out.ts>] [options]

Writes the TypeScript types of a WSDL 1.1 contract's operations (SOAP 1.2 or 1.1
binding, document/literal): each handler's payload and result, and <Name>Handlers for
createSoapService<<Name>Operations>() / soapEndpoint<<Name>Operations>().

Options:
  -o, --out <file>          write to <file> (default: standard output)
      --long-as <repr>      how the service decodes xs:long: bigint (default) or string
      --import-root <dir>   folder the contract's imports may read from, holding the
                            WSDL's folder (default: the WSDL's folder)
      --schema-location <url>=<file>
                            a local copy of a document the contract imports by
                            URL (repeatable); nothing is fetched
      --name <Name>         prefix of <Name>Operations / <Name>Handlers
                            (default: the WSDL's definitions or service name)
      --import-from <mod>   module to import SoapHandlers from (default: @svc/soap-envelope)
  -h, --help                show this help
`;

/** Where the command writes. */
export interface CliStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Runs `svc-soap-types` with the arguments after the command name; returns the exit status
 * (0 done, 1 the contract could not be compiled or written, 2 a usage error).
 */
export function runCli(args: readonly string[], io: CliStreams): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (err) {
    io.stderr.write(`svc-soap-types: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const wsdl = positionals[0];
  if (positionals.length !== 1 || wsdl === undefined) {
    io.stderr.write(`svc-soap-types: name one WSDL file\n\n${USAGE}`);
    return 2;
  }
  try {
    const path = resolve(wsdl);
    const text = generateTypes(readXmlFile(path), {
      baseDir: dirname(path),
      source: basename(path),
      ...(values["long-as"] === undefined ? {} : { longAs: values["long-as"] as "bigint" | "string" }),
      ...(values["import-root"] === undefined ? {} : { importRoot: values["import-root"] }),
      ...(values["schema-location"] === undefined
        ? {}
        : { schemaLocations: schemaLocations(values["schema-location"]) }),
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(values["import-from"] === undefined ? {} : { importFrom: values["import-from"] }),
    });
    if (values.out === undefined) {
      io.stdout.write(text);
    } else {
      writeTextFile(values.out, text);
      io.stderr.write(`svc-soap-types: wrote ${values.out}\n`);
    }
    return 0;
  } catch (err) {
    io.stderr.write(`svc-soap-types: ${(err as Error).message}\n`);
    return 1;
  }
}

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: "string", short: "o" },
      "long-as": { type: "string" },
      "import-root": { type: "string" },
      "schema-location": { type: "string", multiple: true },
      name: { type: "string" },
      "import-from": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** `--schema-location <url>=<file>` pairs, split at the last `=` (a URL's query may hold one). */
function schemaLocations(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.lastIndexOf("=");
    if (at < 0) throw new Error(`--schema-location ${pair}: expected <url>=<file>`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}
