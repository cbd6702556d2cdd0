// Imported first by every bench server that runs on Node.js: `holdTickShape()` of
// @svc/kernel/node, as its README has a service call it at start-up. Every row alike, the peers'
// too: no row lands by chance in the state it prevents (each nextTick tick object built through
// V8's runtime for the rest of the process, after a full collection while none was alive).
import { holdTickShape } from "@svc/kernel/node";

holdTickShape();
