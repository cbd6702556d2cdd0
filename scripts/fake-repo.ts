import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * What the release scripts' tests share to build throw-away repositories shaped like this one:
 * git run for real with a fixed author, files written with their folders, package manifests as
 * the repository writes them.
 */
export const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};

/** `git <args>` in `cwd`, its output trimmed. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: gitEnv,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/** Writes `text` to `path` below `root`, making its folders. */
export function writeIn(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** JSON as the repository writes its manifests: two-space indent, a final newline. */
export const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
