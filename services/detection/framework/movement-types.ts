// The types of a tenant's movements, by external id: the activity record does not carry them.
// split_transfers asks for the movements of a group that would qualify; the asks of one batch's
// evaluations made until the event loop's next turn are answered by one statement. A movement is
// a fact whose type never changes, so an answer holds at any instant and is kept for the batch.
import type { Pool } from '../../../platform/postgres/pool.ts';
import { TurnGatherer } from './turn-gatherer.ts';

// Movement types that give money back (decision 0008 counts them as movements of their own): a
// payment returned, or taken back, has the shape of a flow passing through or going round, and is
// the opposite of one.
export const TAKE_BACK_TYPES: ReadonlySet<string> = new Set(['refund', 'reversal']);

export class MovementTypesLoader {
  // null: not found.
  private readonly known = new Map<string, string | null>();
  private readonly asks: TurnGatherer<readonly string[], void>;

  constructor(
    private readonly pool: Pool,
    private readonly tenantId: string,
  ) {
    this.asks = new TurnGatherer((asks) => this.read(asks));
  }

  // The types of those found.
  async types(ids: readonly string[]): Promise<Map<string, string>> {
    const unknown = ids.filter((id) => !this.known.has(id));
    if (unknown.length > 0) await this.asks.get(unknown);
    const types = new Map<string, string>();
    for (const id of ids) {
      const type = this.known.get(id);
      if (type) types.set(id, type);
    }
    return types;
  }

  private async read(asks: Array<readonly string[]>): Promise<void[]> {
    const ids = [...new Set(asks.flat())];
    const found = await readMovementTypes(this.pool, this.tenantId, ids);
    for (const id of ids) this.known.set(id, found.get(id) ?? null);
    return asks.map(() => undefined);
  }
}

// The types of those found, read by primary key.
export async function readMovementTypes(pool: Pool, tenantId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const types = new Map<string, string>();
  if (ids.length === 0) return types;
  const { rows } = await pool.query<{ external_id: string; type: string }>({
    name: 'detect-movement-types',
    text: 'SELECT external_id, type FROM canonical_movements WHERE tenant_id = $1 AND external_id = ANY($2::text[])',
    values: [tenantId, ids],
  });
  for (const row of rows) types.set(row.external_id, row.type);
  return types;
}
