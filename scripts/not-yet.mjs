#!/usr/bin/env node
// Placeholder for root scripts whose workspace does not exist yet.
const what = process.argv[2];
console.log(
  `npm run ${what}: the ${what === "start" ? "reference server (apps/reference-server)" : "benchmark app (apps/bench)"} is not there yet.`,
);
