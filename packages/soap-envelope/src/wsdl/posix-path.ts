// POSIX path arithmetic on strings, for the contract documents given in memory
// (`contract.documents`), whose names are `/`-separated wherever the endpoint runs: the same
// results as `node:path`'s `posix` functions, for paths that are absolute (from `/`) once resolved.
// @see https://pubs.opengroup.org/onlinepubs/9799919799/basedefs/V1_chap04.html#tag_04_16

/** `path`'s segments with `.` and empty ones dropped and each `..` taking one away (never above `/`). */
function segments(path: string): string[] {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return out;
}

export const sep = "/";

export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/** `paths` resolved from right to left until one is absolute, from `/`: an absolute, normal path. */
export function resolve(...paths: string[]): string {
  let joined = "";
  for (let i = paths.length - 1; i >= 0; i--) {
    const path = paths[i] as string;
    if (path === "") continue;
    joined = joined === "" ? path : `${path}/${joined}`;
    if (isAbsolute(path)) break;
  }
  return `/${segments(joined).join("/")}`;
}

/** A relative path normalised; `..` kept where it climbs above its start. */
export function normalize(path: string): string {
  if (isAbsolute(path)) return resolve(path);
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else out.push(segment);
  }
  return out.length === 0 ? "." : out.join("/");
}

export function join(...paths: string[]): string {
  return normalize(paths.filter((p) => p !== "").join("/") || ".");
}

export function dirname(path: string): string {
  const resolved = isAbsolute(path) ? resolve(path) : normalize(path);
  const at = resolved.lastIndexOf("/");
  if (at < 0) return ".";
  return at === 0 ? "/" : resolved.slice(0, at);
}

/** The path from the folder `from` to `to`, both resolved from `/`. */
export function relative(from: string, to: string): string {
  const a = segments(resolve(from));
  const b = segments(resolve(to));
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...Array<string>(a.length - common).fill(".."), ...b.slice(common)].join("/");
}
