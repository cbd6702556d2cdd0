/**
 * The options Fastify's `register` reads itself (the routes' path prefix, the context's log
 * settings) and hands the plugin too, with the plugin's own.
 *
 * @see https://fastify.dev/docs/latest/Reference/Plugins/#plugin-options
 * @internal
 */
export const REGISTER_OPTIONS: readonly string[] = Object.freeze(["prefix", "logLevel", "logSerializers"]);

/**
 * A Fastify plugin's own options: `options` without {@link REGISTER_OPTIONS}, so the plugin's
 * check of its option names does not refuse them. Anything that is not an object is returned as
 * it came, for that check to refuse.
 *
 * @example const { origins } = pluginOptions(options);
 * @internal
 */
export function pluginOptions<Options>(options: Options): Options {
  if (options === null || typeof options !== "object") return options;
  const own: Record<string, unknown> = {};
  for (const name of Object.keys(options))
    if (!REGISTER_OPTIONS.includes(name)) own[name] = (options as Record<string, unknown>)[name];
  return own as Options;
}
