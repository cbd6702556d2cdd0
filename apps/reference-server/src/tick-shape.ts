// Imported first by main.ts, so that it runs before the modules of the service are evaluated and
// the service is built: see holdTickShape in @svc/kernel/node.
import { holdTickShape } from "@svc/kernel/node";

holdTickShape();
