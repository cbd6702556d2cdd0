#!/usr/bin/env node
import { runCli } from "./cli.js";

// `svc-soap-types`: see USAGE in cli.ts.
process.exitCode = runCli(process.argv.slice(2), process);
