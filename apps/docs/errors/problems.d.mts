/** An error record code's entry (./problems.mjs). */
export interface ProblemEntry {
  pkg: string;
  status: number;
  when: string;
  client: string;
  operator: string;
  app: string;
  requests: { method?: string; path: string; headers?: Record<string, string>; body?: string }[];
  response: { headers?: Record<string, string>; body: Record<string, unknown> };
}

export declare const problems: Record<string, ProblemEntry>;
