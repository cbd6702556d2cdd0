// `--name value` of the script's command line, or `fallback`: the bench scripts' one option form.
const args = process.argv.slice(2);

/** The value after `--<name>` on the command line, else `fallback`. */
export function option(name, fallback) {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : args[index + 1];
}
