import { randomUUID } from 'node:crypto';
import type { Pool } from '../postgres/pool.ts';

// A consumer group's live members as the processes running them say, in PostgreSQL's
// consumer_members: each member beats its row every BEAT_MS on a timer of its own, and one not
// seen for TTL_S is gone. What the Kafka bus counts as live members (svc status): the broker's own
// count follows its group protocol instead, and misreads a live process around an outage (0 while
// it retries a batch in place past its session timeout or rejoins after a broker restart; 2 while
// the member it lost and its replacement are both still listed).
//
// Rows are keyed `kafka:<group id on the cluster>`, apart from the embedded log's own members
// (postgres-log.ts), which share partitions by their count.

const BEAT_MS = 2_000;
const TTL_S = 10;

export class MemberBeats {
  constructor(
    private readonly pool: Pool,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  // Beats for one member until stopped; its row goes on stop.
  start(group: string): { stop: () => Promise<void> } {
    const member = randomUUID();
    const beat = () =>
      this.pool
        .query(
          `INSERT INTO consumer_members (group_name, member_id, seen_at) VALUES ($1, $2, now())
           ON CONFLICT (group_name, member_id) DO UPDATE SET seen_at = now()`,
          [group, member],
        )
        .then(() => undefined, this.onError);
    let beating = beat();
    const timer = setInterval(() => void (beating = beat()), BEAT_MS);
    return {
      stop: async () => {
        clearInterval(timer);
        await beating;
        await this.pool.query('DELETE FROM consumer_members WHERE group_name = $1 AND member_id = $2', [group, member]).catch(this.onError);
      },
    };
  }

  async count(group: string): Promise<number> {
    const { rows } = await this.pool.query<{ members: number }>(
      `SELECT count(*)::int AS members FROM consumer_members WHERE group_name = $1 AND seen_at > now() - make_interval(secs => ${TTL_S})`,
      [group],
    );
    return rows[0]!.members;
  }
}
