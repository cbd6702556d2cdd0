// Measures a folder of real-world WSDLs (README: Measuring a corpus of your own):
//
//   node --import ./apps/bench/src/ts-loader.mjs packages/soap-envelope/scripts/contract-corpus.ts \
//     --dir /path/to/wsdls [--json report.json]
//
// For each WSDL below --dir (each `.wsdl`, any case, and each `.xml` whose root is a WSDL 1.1
// `definitions`): whether it loads strictly, whether it loads with `strict: false` (and the defect
// classes reported), whether node-soap's `createClientAsync` loads it (offline: node-soap is given
// an HTTP client that fetches nothing, as this package fetches nothing), and for a contract that
// loads, one operation called in process with generated schema-valid values (test/corpus-call.ts):
// whether it answers a schema-valid 200. A markdown report goes to stdout.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import * as soap from "soap";
import { type Contract, type DefectClass, type LoadContractOptions, loadContract } from "../src/index.js";
import { callInProcess, callProblem, corpusCall } from "../test/corpus-call.js";
import { contractOptions } from "../test/corpus-files.js";

interface Row {
  file: string;
  /** Strict load: undefined when it loads, else the first problem. */
  strict: string | undefined;
  /** Tolerant load: the defect classes reported (with counts), or the first problem. */
  tolerant: { defects: Partial<Record<DefectClass, number>> } | { refused: string };
  nodeSoap: string | undefined;
  /** "200" for a schema-valid round trip, else what went wrong or why nothing was called. */
  roundTrip: { ok: true; operation: string } | { ok: false; why: string; called: boolean } | undefined;
  importRoot: boolean;
}

const { values } = parseArgs({
  options: { dir: { type: "string" }, json: { type: "string" } },
});
if (values.dir === undefined) {
  process.stderr.write("usage: contract-corpus.ts --dir <folder of WSDLs> [--json <report.json>]\n");
  process.exit(2);
}
const dir = resolve(values.dir);

/** Whether `path` is a WSDL: `.wsdl`, or `.xml` with a WSDL 1.1 `definitions` root. */
function isWsdl(path: string): boolean {
  if (/\.wsdl$/i.test(path)) return true;
  if (!/\.xml$/i.test(path)) return false;
  const head = readFileSync(path, "utf8").replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>/g, "");
  // The document element, its start tag holding WSDL 1.1's namespace.
  const root = /^\s*<([\w.-]+:)?definitions\b[^>]*>/.exec(head.slice(0, 4000));
  return root?.[0].includes("http://schemas.xmlsoap.org/wsdl/") === true;
}

function wsdls(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .flatMap((entry) => {
      if (entry.startsWith(".")) return [];
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) return wsdls(path);
      return isWsdl(path) ? [path] : [];
    });
}

const firstLine = (err: unknown) => {
  const text = err instanceof Error ? err.message : String(err);
  const problems = (err as { problems?: unknown }).problems;
  const first = Array.isArray(problems) && typeof problems[0] === "string" ? problems[0] : text;
  return first.split(`${dir}/`).join("").replace(/\s+/g, " ").slice(0, 240);
};

/** An HTTP client that fetches nothing: node-soap reads local files only, as this package does. */
const offline = {
  request(url: string, _data: unknown, callback: (err: Error) => void) {
    callback(new Error(`not fetched: ${url}`));
  },
  requestStream() {
    throw new Error("not fetched");
  },
};

/** node-soap's client for `wsdl`: undefined when it loads, else its error. */
async function nodeSoapLoads(wsdl: string): Promise<string | undefined> {
  let onUncaught: ((err: Error) => void) | undefined;
  try {
    await Promise.race([
      soap.createClientAsync(wsdl, { httpClient: offline as never }),
      new Promise((_, reject) => {
        onUncaught = reject;
        process.on("uncaughtException", onUncaught);
      }),
      new Promise((_, reject) => setTimeout(() => reject(new Error("no client after 20 s")), 20_000).unref()),
    ]);
    return undefined;
  } catch (err) {
    return firstLine(err);
  } finally {
    if (onUncaught) process.off("uncaughtException", onUncaught);
  }
}

const quiet = { warn: () => {}, error: () => {} };
const rows: Row[] = [];
for (const wsdl of wsdls(dir)) {
  const file = relative(dir, wsdl);
  const options: LoadContractOptions = contractOptions(wsdl, dir);
  let strictContract: Contract | undefined;
  let strict: string | undefined;
  try {
    strictContract = loadContract(wsdl, options);
  } catch (err) {
    strict = firstLine(err);
  }
  let tolerantContract: Contract | undefined;
  let tolerant: Row["tolerant"];
  try {
    tolerantContract = loadContract(wsdl, { ...options, strict: false, logger: quiet });
    const defects: Partial<Record<DefectClass, number>> = {};
    for (const d of tolerantContract.defects) defects[d.class] = (defects[d.class] ?? 0) + 1;
    tolerant = { defects };
  } catch (err) {
    tolerant = { refused: firstLine(err) };
  }
  const nodeSoap = await nodeSoapLoads(wsdl);
  let roundTrip: Row["roundTrip"];
  const contract = strictContract ?? tolerantContract;
  if (contract !== undefined) {
    const callOptions = strictContract ? options : { ...options, strict: false };
    const call = corpusCall(contract);
    if (typeof call === "string") roundTrip = { ok: false, why: call, called: false };
    else {
      try {
        const outcome = await callInProcess(wsdl, callOptions, contract, call);
        const problem = callProblem(call, outcome);
        roundTrip =
          problem === undefined
            ? { ok: true, operation: call.operation.name }
            : { ok: false, why: `${call.operation.name}: ${problem}`, called: true };
      } catch (err) {
        roundTrip = { ok: false, why: `${call.operation.name}: ${firstLine(err)}`, called: true };
      }
    }
  }
  rows.push({ file, strict, tolerant, nodeSoap, roundTrip, importRoot: options.importRoot !== undefined });
  process.stderr.write(".");
}
process.stderr.write("\n");

const cell = (text: string) => text.replace(/\|/g, "\\|");
const out: string[] = [];
out.push(`# Contracts below ${dir}`, "");
out.push("| file | strict | strict: false | node-soap | round trip |", "|---|---|---|---|---|");
for (const r of rows) {
  const tolerant =
    "refused" in r.tolerant
      ? `refused: ${r.tolerant.refused}`
      : Object.keys(r.tolerant.defects).length === 0
        ? "loads, no defect"
        : `loads: ${Object.entries(r.tolerant.defects)
            .map(([c, n]) => `${c} ×${n}`)
            .join(", ")}`;
  const trip =
    r.roundTrip === undefined
      ? ""
      : r.roundTrip.ok
        ? `200 schema-valid (${r.roundTrip.operation})`
        : `${r.roundTrip.called ? "failed" : "not called"}: ${r.roundTrip.why}`;
  out.push(
    `| ${cell(r.file)}${r.importRoot ? " (importRoot)" : ""} | ${r.strict === undefined ? "loads" : cell(`refused: ${r.strict}`)} | ${cell(tolerant)} | ${r.nodeSoap === undefined ? "loads" : cell(`refused: ${r.nodeSoap}`)} | ${cell(trip)} |`,
  );
}
const loads = (pick: (r: Row) => boolean) => rows.filter(pick).length;
const tolerantLoads = loads((r) => !("refused" in r.tolerant));
const called = rows.filter((r) => r.roundTrip?.ok || (r.roundTrip && !r.roundTrip.ok && r.roundTrip.called));
const classes = new Map<string, { files: number; occurrences: number }>();
for (const r of rows) {
  if ("refused" in r.tolerant) continue;
  for (const [c, n] of Object.entries(r.tolerant.defects)) {
    const entry = classes.get(c) ?? { files: 0, occurrences: 0 };
    entry.files++;
    entry.occurrences += n;
    classes.set(c, entry);
  }
}
out.push(
  "",
  "## Totals",
  "",
  "| | WSDLs |",
  "|---|---:|",
  `| in the folder | ${rows.length} |`,
  `| load strictly | ${loads((r) => r.strict === undefined)} |`,
  `| load with strict: false | ${tolerantLoads} |`,
  `| of which with a defect reported | ${loads((r) => !("refused" in r.tolerant) && Object.keys(r.tolerant.defects).length > 0)} |`,
  `| node-soap's createClientAsync loads (offline) | ${loads((r) => r.nodeSoap === undefined)} |`,
  `| loaded, one operation called in process | ${called.length} |`,
  `| of which a schema-valid 200 | ${loads((r) => r.roundTrip?.ok === true)} |`,
  `| loaded, nothing called (no request-response operation with one element each way the generator fills) | ${loads((r) => r.roundTrip !== undefined && !r.roundTrip.ok && !r.roundTrip.called)} |`,
  "",
  "| defect class (strict: false) | WSDLs | occurrences |",
  "|---|---:|---:|",
  ...[...classes]
    .sort((a, b) => b[1].files - a[1].files)
    .map(([c, { files, occurrences }]) => `| ${c} | ${files} | ${occurrences} |`),
);
process.stdout.write(`${out.join("\n")}\n`);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(rows, null, 2)}\n`);
