// Parties and instruments this process has seen committed, so that a batch looks up in PostgreSQL
// only the entities it has not met before. Sound because entities are never removed, and of a
// party or an instrument a batch needs only that it exists (an account's holder and jurisdiction
// can change with its versions, so accounts are always read). A batch of movements names one or
// two parties each, mostly ones met in earlier batches: their lookup was one index probe per
// party per batch in PostgreSQL, and as many rows for the `pg` client to parse.
// Bounded: past `limit` entries the oldest is forgotten (then read again when next named).
export class KnownEntities {
  private readonly keys = new Set<string>();

  constructor(private readonly limit = DEFAULT_LIMIT) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`KnownEntities: limit must be a positive integer, got ${limit}`);
  }

  // Whether an entity of this family may be remembered (and so skipped by a lookup).
  static remembers(object: string): boolean {
    return object === 'party' || object === 'instrument';
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  // Only entities read from committed rows: one written by a batch still running could be undone.
  add(key: string): void {
    if (this.keys.has(key)) return;
    if (this.keys.size >= this.limit) this.keys.delete(this.keys.values().next().value!);
    this.keys.add(key);
  }

  get size(): number {
    return this.keys.size;
  }
}

// About 100 bytes each: a few megabytes at most, against the pipeline's 250 MB.
const DEFAULT_LIMIT = 50_000;
