import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseGenerator, load, startServer, summarise, which } from "../src/harness.mjs";

const run = promisify(execFile);
const runner = fileURLToPath(new URL("../src/run.mjs", import.meta.url));
const hasWrk = which("wrk") !== undefined;

// A server that answers POST /x with 201 and GET /x with 200, GET /fail with 503, and tells on
// GET /stats how many (Idempotency-Key, body) pairs it saw twice and what the last POST carried.
const countingServer = `
import { createServer } from "node:http";
const seen = new Set();
let repeated = 0;
let last = "";
createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => { body += chunk; });
  req.on("end", () => {
    if (req.url === "/stats") return void res.end(JSON.stringify({ repeated, last }));
    if (req.url === "/fail") return void res.writeHead(503).end();
    if (req.method === "POST") {
      const key = req.headers["idempotency-key"] + "|" + body;
      if (seen.has(key)) repeated++;
      last = JSON.stringify([req.headers["idempotency-key"], req.headers["if-none-match"], body]);
      seen.add(key);
    }
    res.writeHead(req.method === "POST" ? 201 : 200).end("ok");
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
`;

// The figures are never asserted (timings on a shared machine are not a test): only that each
// generator sends what it is told and counts what comes back.
describe.each(["autocannon", ...(hasWrk ? ["wrk"] : [])])("load() with %s", (name) => {
  let dir = "";
  let server: Awaited<ReturnType<typeof startServer>>;
  let generator: Awaited<ReturnType<typeof chooseGenerator>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-bench-generator-"));
    await writeFile(join(dir, "counting.mjs"), countingServer);
    server = await startServer({ script: join(dir, "counting.mjs") });
    generator = await chooseGenerator(name);
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("{{seq}} in the body and a header → a different request every time, bytes intact", async () => {
    const request = {
      method: "POST",
      path: "/x",
      headers: {
        "content-type": "application/json",
        "idempotency-key": "bench-{{seq}}",
        // A quote then a digit: the escape that once broke wrk's generated script.
        "if-none-match": '"123"',
      },
      body: `{"email":"bench-{{seq}}@example.com","etag":""1"","name":"Zoë"}`,
    };
    const result = await load(server.url, request, {
      generator,
      connections: 4,
      duration: 1,
      exactStatus: true,
    });
    const summary = summarise(result, 201);
    expect(summary.requests).toBeGreaterThan(0);
    expect(summary.unexpectedStatus).toBe(0);
    expect(summary.statusCodes).toEqual({ 201: summary.requests });
    const stats = (await (await fetch(`${server.url}/stats`)).json()) as { repeated: number; last: string };
    expect(stats.repeated).toBe(0);
    const [key = "", ifNoneMatch, body] = JSON.parse(stats.last) as string[];
    expect(key).toMatch(/^bench-[\w-]+$/);
    expect(ifNoneMatch).toBe('"123"');
    expect(body).toBe(request.body.replace("{{seq}}", key.slice("bench-".length)));
  });

  it("a 503 where 200 is expected → every response unexpected, counted or not", async () => {
    for (const exactStatus of [true, false]) {
      const result = await load(
        server.url,
        { path: "/fail" },
        { generator, connections: 4, duration: 1, exactStatus },
      );
      const summary = summarise(result, 200);
      expect(summary.requests).toBeGreaterThan(0);
      expect(summary.unexpectedStatus).toBe(summary.requests);
      expect(summary.non2xx).toBe(summary.requests);
    }
  });
});

describe("run.mjs generators", () => {
  const outDirs: string[] = [];
  afterAll(async () => {
    await Promise.all(outDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("--generator autocannon → the report names autocannon and has CPU µs per request", async () => {
    const out = await mkdtemp(join(tmpdir(), "svc-bench-"));
    outDirs.push(out);
    const { stdout } = await run(
      process.execPath,
      [runner, "--quick", "--duration", "1", "--generator", "autocannon", "--only", "raw-node", "--out", out],
      { timeout: 30_000 },
    );
    expect(stdout).toMatch(/^load generator: autocannon /m);
    const report = JSON.parse(await readFile(join(out, "quick.json"), "utf8"));
    expect(report.settings.generator.name).toBe("autocannon");
    expect(report.results[0].status).toBe("ok");
    expect(report.results[0].summary.cpuMicrosPerRequest).toBeGreaterThanOrEqual(0);
    expect(await readFile(join(out, "quick.md"), "utf8")).toContain("Load generator: **autocannon**");
  });

  it.skipIf(!hasWrk)("wrk installed → used by default, pinned where there are two cores", async () => {
    const out = await mkdtemp(join(tmpdir(), "svc-bench-"));
    outDirs.push(out);
    await run(process.execPath, [runner, "--quick", "--duration", "1", "--only", "raw-node", "--out", out], {
      timeout: 30_000,
    });
    const report = JSON.parse(await readFile(join(out, "quick.json"), "utf8"));
    expect(report.settings.generator.name).toBe("wrk");
    expect(report.settings.connections).toBe(32);
    expect(report.results[0].status).toBe("ok");
    expect(report.results[0].summary.cpuMicrosPerRequest).toBeGreaterThanOrEqual(0);
    const markdown = await readFile(join(out, "quick.md"), "utf8");
    expect(markdown).toContain("Load generator: **wrk**");
    if (report.machine.cpus >= 2 && which("taskset")) {
      expect(markdown).toMatch(/server on CPU \d+, wrk on CPU \d+/);
    }
  });

  it("--generator nope → exit code 2", async () => {
    const failure = await run(process.execPath, [runner, "--quick", "--generator", "nope"]).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain("--generator must be wrk or autocannon, got nope");
  });
});
