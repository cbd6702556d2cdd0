import { defineConfig } from "tsup";
import { commonJsWith } from "../../tooling/tsup-preset.js";
import { entry } from "./tsup.config.js";

// The CommonJS scripts again, over the ordinary build's, with jose (an ES module only) bundled
// in (tsup.config.ts says why).
export default defineConfig(commonJsWith(entry, ["jose"]));
