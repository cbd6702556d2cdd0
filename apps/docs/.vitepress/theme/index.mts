import DefaultTheme from "vitepress/theme";
import { h } from "vue";
import { SearchIndexStatus } from "./search-index-status.mts";
import "./custom.css";

/** The default theme, with a loading state for the local search's index (`SearchIndexStatus`). */
export default {
  extends: DefaultTheme,
  Layout: () => h(DefaultTheme.Layout, null, { "layout-bottom": () => h(SearchIndexStatus) }),
};
