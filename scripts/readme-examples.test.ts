import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The checker is a plain .mjs script: CI runs it with node, before and without any build step.
import {
  checkReadmeExamples,
  extractBlocks,
  poweredByApps,
  repositoryRoot,
  typescriptCompiler,
  uninstalledImports,
} from "./readme-examples.mjs";

const fence = "```";
const readme = [
  "# demo", // 1
  "", // 2
  `${fence}ts`, // 3
  'const n: number = "not a number";', // 4: TS2322
  fence, // 5
  "", // 6
  "<!-- example: fragment", // 7
  "declare const id: string;", // 8
  "-->", // 9
  `${fence}ts`, // 10
  'app.get("/employees/" + id, (req, res) => res.json({ path: req.path }));', // 11: app, id from the prelude
  fence, // 12
  "", // 13
  `${fence}ts`, // 14
  "app.use((_req, _res, next) => next());", // 15: no marker, so no prelude: TS2304
  fence, // 16
  "", // 17
  "<!-- example: skip shown for its shape only -->", // 18
  `${fence}js`, // 19
  "this is not code", // 20
  fence, // 21
  "", // 22
  "<!-- example: run", // 23
  "GET /ok -> 200", // 24
  "GET /missing Accept: application/json -> 200", // 25: answers 404
  "-->", // 26
  `${fence}ts`, // 27
  'import { createServer } from "node:http";', // 28
  'createServer((req, res) => res.writeHead(req.url === "/ok" ? 200 : 404).end()).listen(8080);', // 29
  fence, // 30
].join("\n");

describe("README example markers", () => {
  it("reads each block's kind, prelude, requests and skip reason", () => {
    const blocks = extractBlocks(readme, "README.md");
    expect(blocks.map((b: { kind: string; line: number }) => [b.kind, b.line])).toEqual([
      ["module", 4],
      ["fragment", 11],
      ["module", 15],
      ["skip", 20],
      ["run", 28],
    ]);
    expect(blocks[1].prelude).toEqual(["declare const id: string;"]);
    expect(blocks[3].reason).toBe("shown for its shape only");
    expect(blocks[4].requests).toEqual([
      { method: "GET", path: "/ok", headers: {}, status: 200 },
      { method: "GET", path: "/missing", headers: { Accept: "application/json" }, status: 200 },
    ]);
  });

  it("<!-- example: run express5 --> marks a program that needs Express 5; plain run does not", () => {
    const marked = `<!-- example: run express5\nGET / -> 200\n-->\n${fence}ts\nx\n${fence}\n`;
    expect(extractBlocks(marked, "R.md")[0]).toMatchObject({ kind: "run", express5: true });
    expect(extractBlocks(readme, "README.md")[4]).toMatchObject({ kind: "run", express5: false });
  });

  it("refuses a skip without a reason and an unknown marker", () => {
    expect(() => extractBlocks(`<!-- example: skip -->\n${fence}ts\nx\n${fence}\n`, "R.md")).toThrow(
      /needs a reason/,
    );
    expect(() => extractBlocks(`<!-- example: frgment -->\n${fence}ts\nx\n${fence}\n`, "R.md")).toThrow(
      /unknown/,
    );
  });
});

describe("uninstalledImports", () => {
  it("names an @svc import that no npm install line of the README names", () => {
    const text = [
      `${fence}sh`,
      "npm install @svc/errors express@^5 # and @svc/negotiate, said only in a comment",
      fence,
      `${fence}ts`,
      'import { errorHandler } from "@svc/errors/express";',
      'import { negotiate } from "@svc/negotiate";',
      fence,
    ].join("\n");
    expect(uninstalledImports(text, extractBlocks(text, "R.md"))).toEqual([
      "R.md:6: imports @svc/negotiate, which no `npm install` line of the README names",
    ]);
  });
});

describe("uninstalledImports: a run block's other packages", () => {
  const text = (marker: string) =>
    [
      `${fence}sh`, // 1
      "npm install @svc/errors", // 2
      fence, // 3
      marker, // 4
      `${fence}ts`, // 5
      'import express from "express";', // 6
      'import { createServer } from "node:http";', // 7
      'import { readFileSync } from "fs";', // 8
      'import pino from "pino";', // 9
      'import { z } from "@scope/pkg";', // 10
      'import { x } from "./local.js";', // 11
      fence,
    ].join("\n");

  it("a run block importing pino and @scope/pkg, neither installed → both named; express, node:http, fs, ./local.js not", () => {
    const markdown = text("<!-- example: run\nGET / -> 200\n-->");
    expect(uninstalledImports(markdown, extractBlocks(markdown, "R.md"))).toEqual([
      "R.md:11: imports pino, which no `npm install` line of the README names",
      "R.md:12: imports @scope/pkg, which no `npm install` line of the README names",
    ]);
  });

  it("the same imports in a fragment → nothing named (only @svc packages are checked there)", () => {
    const markdown = text("<!-- example: fragment -->");
    expect(uninstalledImports(markdown, extractBlocks(markdown, "R.md"))).toEqual([]);
  });

  it("pino on an install line → not named", () => {
    const markdown = text("<!-- example: run\nGET / -> 200\n-->").replace(
      "npm install @svc/errors",
      "npm install @svc/errors pino @scope/pkg@^2",
    );
    expect(uninstalledImports(markdown, extractBlocks(markdown, "R.md"))).toEqual([]);
  });
});

describe("poweredByApps", () => {
  const block = (...lines: string[]) => [`${fence}ts`, ...lines, fence].join("\n");
  it.each([
    ["const app = express(); alone", ["R.md:2"], ["const app = express();"]],
    ['app.disable("x-powered-by")', [], ["const app = express();", 'app.disable("x-powered-by");']],
    ['app.set("x-powered-by", false)', [], ["const app = express();", "app.set('x-powered-by', false);"]],
    ["a reason in a comment", [], ["const app = express(); // keeps X-Powered-By: the block shows it"]],
    ["a comment without a reason", ["R.md:2"], ["const app = express(); // keeps X-Powered-By:"]],
    ["express.Router() only", [], ["const router = express.Router();"]],
    ["no app", [], ['app.get("/", handler);']],
  ])("%s → problems at %j", (_what, where, lines) => {
    const problems = poweredByApps(extractBlocks(block(...lines), "R.md"));
    expect(problems.map((p: string) => p.slice(0, p.indexOf(": ")))).toEqual(where);
  });

  it("a skipped block is not looked at", () => {
    const markdown = `<!-- example: skip shape only -->\n${block("const app = express();")}`;
    expect(poweredByApps(extractBlocks(markdown, "R.md"))).toEqual([]);
  });
});

describe("checkReadmeExamples: a run block answering with X-Powered-By", () => {
  let project: string;
  let failures: string[];
  beforeAll(async () => {
    project = mkdtempSync(join(repositoryRoot, ".readme-examples-test-"));
    writeFileSync(
      join(project, "README.md"),
      [
        "<!-- example: run",
        "GET / -> 200",
        "-->",
        `${fence}ts`,
        'import { createServer } from "node:http";',
        'createServer((_req, res) => res.setHeader("X-Powered-By", "PHP/8.3").writeHead(200).end()).listen(8080);',
        fence,
      ].join("\n"),
    );
    ({ failures } = await checkReadmeExamples({
      readmes: [{ path: join(project, "README.md"), packageName: undefined }],
      project,
      root: project,
      tsc: typescriptCompiler(repositoryRoot),
      log: () => {},
    }));
  }, 60_000);
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it("fails it, naming the request and the header", () => {
    expect(failures).toEqual(["README.md:5 (run): GET / answered with X-Powered-By: PHP/8.3"]);
  });
});

describe("checkReadmeExamples", () => {
  // Inside the repository, so the blocks resolve express and @types/node from its node_modules.
  let project: string;
  let result: { found: number; checked: number; run: number; skipped: string[]; failures: string[] };
  beforeAll(async () => {
    project = mkdtempSync(join(repositoryRoot, ".readme-examples-test-"));
    mkdirSync(join(project, "docs"));
    writeFileSync(join(project, "docs", "README.md"), readme);
    result = await checkReadmeExamples({
      readmes: [{ path: join(project, "docs", "README.md"), packageName: undefined }],
      project,
      root: project,
      tsc: typescriptCompiler(repositoryRoot),
      log: () => {},
    });
  }, 60_000);
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it("fails a block with a type error, naming the README line and the diagnostic", () => {
    expect(result.failures.filter((f) => f.startsWith("docs/README.md:4:"))).toEqual([
      expect.stringMatching(/error TS2322: Type 'string' is not assignable to type 'number'/),
    ]);
  });

  it("compiles a fragment after its prelude, and an unmarked block without one", () => {
    expect(result.failures.some((f) => f.startsWith("docs/README.md:11:"))).toBe(false);
    expect(result.failures).toContainEqual(
      expect.stringMatching(/^docs\/README\.md:15:1 .*TS2304: Cannot find name 'app'/),
    );
  });

  it("lists a skipped block with its reason and does not compile it", () => {
    expect(result.skipped).toEqual(["docs/README.md:20 (shown for its shape only)"]);
    expect(result.failures.some((f) => f.startsWith("docs/README.md:20"))).toBe(false);
  });

  it("runs a run block against a real server and fails a request with another status", () => {
    expect(result.failures.filter((f) => f.includes("(run)"))).toEqual([
      expect.stringMatching(/^docs\/README\.md:28 \(run\): GET \/missing answered 404, expected 200/),
    ]);
    expect(result).toMatchObject({ found: 5, checked: 4, run: 0 });
    // Every failure is one of the three broken blocks: nothing else fails.
    expect(result.failures.every((f) => /^docs\/README\.md:(4|15|28)\b/.test(f))).toBe(true);
  });
});
