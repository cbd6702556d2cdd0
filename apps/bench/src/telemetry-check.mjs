// Whether a server's telemetry was live while it was measured: the requests its Prometheus
// metrics say it recorded for a route. A row measured "with telemetry" that recorded nothing
// measured a server without it.

/** The request-duration histograms' counts, by the semantic conventions' names (stable, then old). */
const COUNTS = ["http_server_request_duration_count", "http_server_duration_count"];

/**
 * The requests `text` (the Prometheus text format) counts in its HTTP server duration histogram
 * for routes matching `route`, summed over every other label (status, method, ...), and the routes
 * seen. `undefined` when the text has no such histogram.
 *
 * @param {string} text
 * @param {RegExp} route a pattern over the `http_route` label's value
 * @returns {{ metric: string, recorded: number, routes: string[] } | undefined}
 */
export function recordedRequests(text, route) {
  for (const metric of COUNTS) {
    const lines = text.split("\n").filter((line) => line.startsWith(`${metric}{`));
    if (lines.length === 0) continue;
    let recorded = 0;
    const routes = new Set();
    for (const line of lines) {
      const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
      const value = /http_route="((?:[^"\\]|\\.)*)"/.exec(labels)?.[1];
      if (value === undefined) continue;
      routes.add(value);
      if (route.test(value)) recorded += Number(line.slice(line.lastIndexOf("}") + 1).trim());
    }
    return { metric, recorded, routes: [...routes] };
  }
  return undefined;
}

/**
 * `GET metricsUrl` and what it recorded for the employee route (`/employees/:id` on Express,
 * `/employees/{id}` on the reference server), or `{ error }` when the metrics cannot be read.
 *
 * @param {string} metricsUrl
 */
export async function scrapeRecorded(metricsUrl) {
  try {
    const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    if (!response.ok) return { error: `GET ${metricsUrl} → ${response.status}` };
    return recordedRequests(text, /^\/employees\/[:{]/) ?? { error: "no HTTP server duration histogram" };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
