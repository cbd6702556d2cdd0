/** VitePress's local search index, one loader per locale (its `localSearchPlugin`). */
declare module "@localSearchIndex" {
  const data: Record<string, () => Promise<{ default: string }>>;
  export default data;
}
