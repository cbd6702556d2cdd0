// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  if (typeof mod.versions({ versions: [1, 2], defaultVersion: 1 }).resolve !== "function")
    throw new Error("versions() is broken");
  const r = mod.versionResolver({ versions: [1, 2], defaultVersion: 1 })("/v2/employees", {});
  if (r.version !== 2 || r.url !== "/employees") throw new Error("versionResolver is broken");
  if (mod.formatDeprecation(new Date(0)) !== "@0") throw new Error("formatDeprecation is broken");
  const one = () => {};
  if (mod.versionDispatch({ 1: one })(1) !== one) throw new Error("versionDispatch() is broken");
  let threw = false;
  try {
    mod.versions({
      versions: [1],
      deprecated: { 1: { deprecation: "2026-07-01", sunset: "2026-01-01" } },
    });
  } catch (e) {
    threw = e instanceof TypeError;
  }
  if (!threw) throw new Error("a sunset before the deprecation must be rejected");
}
