import type { FieldValue } from "@svc/kernel";

/**
 * `PipelineRequest.preset` over a response that answers `getHeader` (a `node:http` response, a
 * Fastify reply): the fields set in front of the pipeline. The field read last is kept, as the
 * coding decision and the validators read `Cache-Control` in turn and nothing writes the response
 * while its pipeline decides.
 */
export function presetFields(response: {
  getHeader(name: string): unknown;
}): (name: string) => FieldValue | undefined {
  let last: string | undefined;
  let value: FieldValue | undefined;
  return (name) => {
    if (name !== last) {
      value = response.getHeader(name) as FieldValue | undefined;
      last = name;
    }
    return value;
  };
}
