import localSearchIndex from "@localSearchIndex";
import { useData } from "vitepress";
import { defineComponent, h, onMounted, onUnmounted, ref } from "vue";

/**
 * The local search loads its whole index (one script of some hundreds of kB) when the search box
 * first opens, and shows an empty box until it has. This says so while it loads, and fetches the
 * index once the page is idle, so that a first search seldom waits at all (not with the browser's
 * data saver on: it waits for the box instead).
 */
export const SearchIndexStatus = defineComponent({
  name: "SearchIndexStatus",
  setup() {
    const { localeIndex } = useData();
    const open = ref(false);
    const loaded = ref(false);
    let started = false;
    let observer: MutationObserver | undefined;
    // The same module the search box imports: whichever asks first, both get the one download.
    const load = () => {
      if (started) return;
      started = true;
      Promise.resolve(localSearchIndex[localeIndex.value]?.()).then(
        () => {
          loaded.value = true;
        },
        () => {
          started = false;
        },
      );
    };
    onMounted(() => {
      // The box is teleported to <body> when it opens and removed when it closes.
      const seen = () => {
        open.value = document.body.querySelector(":scope > .VPLocalSearchBox") !== null;
        if (open.value) load();
      };
      observer = new MutationObserver(seen);
      observer.observe(document.body, { childList: true });
      seen();
      const saveData = (navigator as { connection?: { saveData?: boolean } }).connection?.saveData === true;
      if (saveData) return;
      if ("requestIdleCallback" in window) window.requestIdleCallback(load, { timeout: 5000 });
      else setTimeout(load, 2000);
    });
    onUnmounted(() => observer?.disconnect());
    return () =>
      h(
        "div",
        {
          class: "svc-search-status",
          role: "status",
          "aria-live": "polite",
          style: open.value && !loaded.value ? undefined : { display: "none" },
        },
        "Loading the search index…",
      );
  },
});
