// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  const doc = JSON.parse(JSON.stringify(mod.hal({ id: 1 }).link(mod.Rel.SELF, "/x")));
  if (doc._links?.self?.href !== "/x") throw new Error("hal() is broken");
  if (mod.expandTemplate("/e{?page}", { page: 2 }) !== "/e?page=2")
    throw new Error("expandTemplate is broken");
  const page = mod.pageModel({ collection: "e", items: [], page: 1, size: 5, totalElements: 6, url: "/e" });
  if (page._links.next?.href !== "/e?page=2&size=5") throw new Error("pageModel is broken");
  if (mod.halJson.mediaType !== "application/hal+json") throw new Error("halJson is broken");
  if (typeof mod.crawlLinks !== "function") throw new Error("crawlLinks is missing");
}
