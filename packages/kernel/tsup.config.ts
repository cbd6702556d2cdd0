export { default } from "../../tooling/tsup-preset.js";
