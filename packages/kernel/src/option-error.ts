/**
 * Options refused at construction. Every @svc factory checks its options once, when it is
 * created, and throws one of these: a `TypeError` (Node's convention for a wrong argument) with a
 * stable `code` a caller can match on, `ERR_SVC_<PACKAGE>_<OPTION>`, in the style of Node's own
 * `ERR_INVALID_ARG_TYPE` codes.
 *
 * @see https://nodejs.org/api/errors.html#errorcode
 */

/** A refused option: a `TypeError` with a stable `code` naming the package and the option. */
export interface OptionError extends TypeError {
  /** `ERR_SVC_<PACKAGE>_<OPTION>`, e.g. `ERR_SVC_AUTH_BASIC_CONCURRENCY` for auth's `basic.concurrency`. */
  code: string;
  /**
   * The page of the code on the documentation site, `https://svc-dev.github.io/svc/errors/<code>.html`:
   * Node.js prints it under the stack of an uncaught error, next to `code`, and loggers that
   * serialise an error's own fields log it.
   */
  docs: string;
}

/** The documentation site, whose `errors/<code>.html` page explains each code. */
const DOCS_SITE = "https://svc-dev.github.io/svc/";

/**
 * How a refused value is shown in the message: strings quoted, functions and plain objects named
 * (never their contents, which may hold secrets), lists item by item, the rest as `String` does.
 *
 * @internal
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (value === null || value instanceof RegExp || value instanceof Date) return String(value);
  if (Array.isArray(value)) return `[${value.map(describeValue).join(", ")}]`;
  if (typeof value === "object") return "an object";
  return String(value);
}

/**
 * The stable code of a refused option: list positions dropped, camelCase split, punctuation made
 * `_`, in the package name too (`soap-envelope` → `SOAP_ENVELOPE`). `("versioning", "deprecated.1.sunset")` → `ERR_SVC_VERSIONING_DEPRECATED_SUNSET`.
 *
 * @internal
 */
export function optionErrorCode(pkg: string, option: string): string {
  return `ERR_SVC_${constantCase(pkg)}_${constantCase(option.replace(/\.\d+(?=\.|$)/g, ""))}`;
}

function constantCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
}

/**
 * The `TypeError` for a refused option, with its message as given, the code of
 * {@link optionErrorCode} and the address of the code's page (`docs`).
 *
 * @example throw optionError("ratelimit", "timeoutMs", "RedisStore: timeoutMs must be a positive number of milliseconds");
 *
 * @internal
 */
export function optionError(pkg: string, option: string, message: string): OptionError {
  const err = new TypeError(message) as OptionError;
  err.code = optionErrorCode(pkg, option);
  err.docs = `${DOCS_SITE}errors/${err.code}.html`;
  return err;
}

/**
 * The `TypeError` for a refused option that names the option, what was given and what is
 * accepted: `<label> must be <accepted>, got <given>`.
 *
 * @example throw refusedOption("hal", "trustProxy", -1, "true, false, a hop count, addresses or a function", "@svc/hal: trustProxy");
 *
 * @internal
 */
export function refusedOption(
  pkg: string,
  option: string,
  given: unknown,
  accepted: string,
  label: string = option,
): OptionError {
  return optionError(pkg, option, `${label} must be ${accepted}, got ${describeValue(given)}`);
}

/**
 * Checks an options argument before its fields are read: `undefined` stands for `{}`; anything
 * else must be an object (code `ERR_SVC_<PACKAGE>_OPTIONS`, or `..._<OPTION>` for a nested
 * object) whose own names are all in `known` (code `ERR_SVC_<PACKAGE>_UNKNOWN_OPTION`): a
 * misspelt option (`langauges`) is refused with the closest known name rather than silently
 * ignored, as TypeScript only catches it in an object literal.
 *
 * @example checkOptionNames("negotiate", options, ["representations", "languages", "compression"], "negotiate");
 *
 * @internal
 */
export function checkOptionNames(
  pkg: string,
  options: unknown,
  known: readonly string[],
  label: string,
  option = "options",
): void {
  if (options === undefined) return;
  // Called per request by constructors such as HalResource: the message text is only built for a
  // refusal.
  const shape = () => `an object with ${known.length === 0 ? "no fields" : `the fields ${known.join(", ")}`}`;
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw refusedOption(pkg, option, options, shape(), `${label}: ${option}`);
  }
  for (const name in options) {
    if (!Object.hasOwn(options, name) || known.includes(name)) continue;
    const path = option === "options" ? "" : `${option}.`;
    const near = closest(name, known);
    throw optionError(
      pkg,
      "unknownOption",
      `${label}: unknown option ${JSON.stringify(`${path}${name}`)}${
        near === undefined ? "" : ` (did you mean ${JSON.stringify(`${path}${near}`)}?)`
      }; ${option} must be ${shape()}`,
    );
  }
}

/** The known name a misspelling most likely meant: same letters ignoring case, or 2 edits away at most. */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d =
      candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name, candidate, bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, given up (returning `limit`) once every path exceeds `limit`; option names are short. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit || a.length > 64 || b.length > 64) return limit;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      row.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin >= limit) return limit;
    previous = row;
  }
  return Math.min(previous[b.length] ?? limit, limit);
}

/**
 * Refuses an option that is neither `undefined` nor a boolean (`"false"` from an environment
 * variable would otherwise read as true).
 *
 * @example checkBooleanOption("conditional", "required", options.required, "preconditions: required");
 *
 * @internal
 */
export function checkBooleanOption(pkg: string, option: string, value: unknown, label = option): void {
  if (value !== undefined && typeof value !== "boolean") {
    throw refusedOption(pkg, option, value, "true or false", label);
  }
}

/**
 * Refuses an option that is given (not `undefined`) and is not of `type` (as `typeof` names it):
 * `<label> must be <accepted>, got <given>`.
 *
 * @example checkOptionType("negotiate", "bodies", options.bodies, "function", "a function", "negotiateOpenApi: bodies");
 *
 * @internal
 */
export function checkOptionType(
  pkg: string,
  option: string,
  value: unknown,
  type: "string" | "function",
  accepted: string,
  label: string = option,
): void {
  if (value !== undefined) requireOptionType(pkg, option, value, type, accepted, label);
}

/**
 * Refuses an argument that is not of `type` (as `typeof` names it), `undefined` included:
 * `<label> must be <accepted>, got <given>`.
 *
 * @example requireOptionType("conditional", "method", method, "string", "a string", "evaluatePreconditions: method");
 *
 * @internal
 */
export function requireOptionType(
  pkg: string,
  option: string,
  value: unknown,
  type: "string" | "function",
  accepted: string,
  label: string = option,
): void {
  if (typeof value !== type) throw refusedOption(pkg, option, value, accepted, label);
}
