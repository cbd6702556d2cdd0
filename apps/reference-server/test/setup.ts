import { afterAll, afterEach } from "vitest";

// Run before every test file of the reference server's projects (vitest.config.ts `setupFiles`):
// each response a suite receives from the service is checked against /openapi.json, failing the
// test that caused it (and the file, for what its hooks received). A setup file, not a call in
// harness.ts, because most of these projects keep their module graph between files, where a
// module's top-level code runs only for the first file that imports it. The check is loaded when
// first needed: a suite's `vi.mock` must be in place before the service's modules load.
const check = () => import("./openapi-check.js");
afterEach(async () => (await check()).checkRecordedResponses());
afterAll(async () => {
  const { checkRecordedResponses, reportCheckStats } = await check();
  checkRecordedResponses();
  reportCheckStats();
});
