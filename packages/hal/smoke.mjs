// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`, and with its subpath entries (`./testing`). It throws when
// the public surface is broken.
export default function smoke(mod, _kind, entries = {}) {
  const doc = JSON.parse(JSON.stringify(mod.hal({ id: 1 }).link(mod.Rel.SELF, "/x")));
  if (doc._links?.self?.href !== "/x") throw new Error("hal() is broken");
  if (mod.expandTemplate("/e{?page}", { page: 2 }) !== "/e?page=2")
    throw new Error("expandTemplate is broken");
  const page = mod.pageModel({ collection: "e", items: [], page: 1, size: 5, totalElements: 6, url: "/e" });
  if (page._links.next?.href !== "/e?page=2&size=5") throw new Error("pageModel is broken");
  // proxy-addr, a dependency, must resolve from the installed package.
  const trust = mod.compileTrust("loopback, 10.0.0.0/8");
  if (!trust("10.1.2.3", 0) || trust("192.0.2.1", 0)) throw new Error("compileTrust is broken");
  if (mod.pageItems(page)?.length !== 0) throw new Error("pageItems is broken");
  if (mod.halJson.mediaType !== "application/hal+json") throw new Error("halJson is broken");
  if ("crawlLinks" in mod) throw new Error("crawlLinks ships from the main entry");
  if (typeof entries["./testing"]?.crawlLinks !== "function")
    throw new Error("@svc/hal/testing does not export crawlLinks");
}
