import { describe, expect, it } from "vitest";
import { describeValue, optionError, optionErrorCode, refusedOption } from "./internal.js";

describe("option errors", () => {
  it.each([
    ["versioning", "deprecated.1.sunset", "ERR_SVC_VERSIONING_DEPRECATED_SUNSET"],
    ["auth", "basic.failureLimit.perClient", "ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_CLIENT"],
    ["ratelimit", "timeoutMs", "ERR_SVC_RATELIMIT_TIMEOUT_MS"],
    ["hal", "trustProxy", "ERR_SVC_HAL_TRUST_PROXY"],
    ["soap-envelope", "roles", "ERR_SVC_SOAP_ENVELOPE_ROLES"],
  ])("optionErrorCode(%s, %s) → %s", (pkg, option, code) => {
    expect(optionErrorCode(pkg, option)).toBe(code);
  });

  it.each<[unknown, string]>([
    ["en", '"en"'],
    [() => 1, "a function"],
    [null, "null"],
    [undefined, "undefined"],
    [/x/i, "/x/i"],
    [["a", 1, { secret: "s" }], '["a", 1, an object]'],
    [{ password: "hunter2" }, "an object"],
    [42, "42"],
  ])("describeValue(%o) → %s, never an object's contents", (value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });

  it("refusedOption names the option, what was given and what is accepted", () => {
    const err = refusedOption(
      "negotiate",
      "languages",
      "en",
      "a list of language tags",
      "negotiate: languages",
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('negotiate: languages must be a list of language tags, got "en"');
    expect(err.code).toBe("ERR_SVC_NEGOTIATE_LANGUAGES");
    expect(err.docs).toBe("https://svc-dev.github.io/svc/errors/ERR_SVC_NEGOTIATE_LANGUAGES.html");
    expect(optionError("x", "y", "message").message).toBe("message");
  });
});
