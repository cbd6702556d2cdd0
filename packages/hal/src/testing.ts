/**
 * `@svc/hal/testing`: helpers for a service's own tests, kept out of the main entry so
 * production code never loads them.
 */
export { type CrawlOptions, type CrawlProblem, type CrawlReport, crawlLinks } from "./crawl.js";
