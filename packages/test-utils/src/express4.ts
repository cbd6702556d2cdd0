import { createRequire } from "node:module";
import type express from "express";

const require = createRequire(import.meta.url);

/**
 * Express 4, installed beside Express 5 under the alias `express4` (a root dev dependency), so
 * each package's middleware is also run on the oldest Express major its peer range accepts.
 *
 * @example
 * const app = express4();
 * app.use(rateLimit({ limit: 2 }));
 */
export const express4 = require("express4") as typeof express;

/** The installed Express 4 version (`4.22.3`, ...), for test names and a guard that it is 4. */
export const express4Version = (require("express4/package.json") as { version: string }).version;
