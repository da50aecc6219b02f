// Which parties have an open live alert raised at or before an instant, asked by the evaluations
// of one batch of one tenant (mule_network asks for every party it evaluates): the asks made until
// the event loop's next turn are answered by one statement instead of one each.
import type { Pool } from '../../../platform/postgres/pool.ts';
import { TurnGatherer } from './turn-gatherer.ts';

interface Ask {
  parties: readonly string[];
  at: Date;
}

export class FlaggedPartiesLoader {
  private readonly asks: TurnGatherer<Ask, string[]>;

  constructor(
    private readonly pool: Pool,
    private readonly tenantId: string,
  ) {
    this.asks = new TurnGatherer((asks) => this.read(asks));
  }

  // Of these parties, those with an open live alert whose window starts at or before `at`, in no
  // particular order.
  flagged(parties: readonly string[], at: Date): Promise<string[]> {
    if (parties.length === 0) return Promise.resolve([]);
    return this.asks.get({ parties, at });
  }

  private async read(asks: Ask[]): Promise<string[][]> {
    const index: number[] = [];
    const party: string[] = [];
    const at: Date[] = [];
    asks.forEach((ask, i) => {
      for (const p of new Set(ask.parties)) {
        index.push(i);
        party.push(p);
        at.push(ask.at);
      }
    });
    // One probe of the alerts_open_party index per party asked (LATERAL ... LIMIT 1: whether one such
    // alert exists, never a join planned over the tenant's alerts).
    const { rows } = await this.pool.query<{ i: number; party_id: string }>({
      name: 'detect-flagged-parties-batch',
      text: `SELECT u.i, u.party AS party_id
               FROM unnest($2::int[], $3::text[], $4::timestamptz[]) AS u(i, party, at)
              CROSS JOIN LATERAL (
                SELECT 1 FROM alerts a
                 WHERE a.tenant_id = $1 AND a.mode = 'live' AND a.status = 'open' AND a.party_id = u.party AND a.window_from <= u.at
                 LIMIT 1
              ) found`,
      values: [this.tenantId, index, party, at],
    });
    const answers: string[][] = asks.map(() => []);
    for (const row of rows) answers[row.i]!.push(row.party_id);
    return answers;
  }
}
