import { parse } from 'yaml';
import type { z } from 'zod';

// A manifest file read through its zod schema: either the parsed value or every problem, each
// naming where it is (a YAML position, or the path of the offending field).
export type ManifestResult<T> = { ok: true; value: T } | { ok: false; problems: string[] };

export function parseYamlManifest<S extends z.ZodType>(schema: S, text: string): ManifestResult<z.output<S>> {
  let document: unknown;
  try {
    // YAML 1.2 core schema; duplicate keys are an error; merge keys (<<) are resolved.
    document = parse(text, { merge: true, uniqueKeys: true, prettyErrors: true });
  } catch (error) {
    return { ok: false, problems: [`not valid YAML: ${(error as Error).message}`] };
  }
  const parsed = schema.safeParse(document);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(document)'}: ${issue.message}`),
  };
}
