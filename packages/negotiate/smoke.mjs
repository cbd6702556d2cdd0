// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  if (
    mod.selectMediaType("application/xml;q=0.5, */*", ["application/json", "application/xml"]) !==
    "application/json"
  )
    throw new Error("selectMediaType is broken");
  if (
    mod.matchMediaType("application/vnd.svc.v2+json", ["application/json"], "application/vnd.svc.v2+json")
      ?.mediaType !== "application/vnd.svc.v2+json" ||
    mod.matchMediaType("application/problem+json", ["application/json"]) !== undefined
  )
    throw new Error("matchMediaType is broken");
  if (mod.selectEncoding("identity;q=0", ["gzip"]) !== undefined) throw new Error("selectEncoding is broken");
  if (mod.selectLanguage("de-AT", ["en", "de"]) !== "de") throw new Error("selectLanguage is broken");
  const step = mod.representations({ offers: [mod.json, mod.xml] });
  if (typeof step.represent !== "function" || typeof step.preflight !== "function")
    throw new Error("representations() is not a pipeline step");
  if (typeof mod.compression().choose !== "function") throw new Error("compression() is not a pipeline step");
  if (typeof mod.bodyReader() !== "function") throw new Error("bodyReader() is not a function");
  if (typeof mod.crossOriginGate({ origins: ["https://a.example"] }) !== "function")
    throw new Error("crossOriginGate() is not a function");
  if (!mod.xml.serialize({ a: "<" }).includes("<a>&lt;</a>")) throw new Error("xml representation is broken");
  if (mod.csv.serialize([{ a: 1 }]) !== "a\r\n1\r\n") throw new Error("csv representation is broken");
}
