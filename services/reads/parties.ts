import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CursorCodec } from '../../platform/http/cursor.ts';
import { sendProblem } from '../../platform/http/problem-reply.ts';
import type { postureSchema } from '../../schemas/responses.ts';
import type { z } from 'zod';
import { MOVEMENT_COLUMNS, movementView, type EntityRow, type MovementRow, type MovementView } from './views.ts';

// Reads of one canonical party shared by the /v1 API and the console: the entity, its posture
// band and its movements; and one movement by its id. Every query filters on the tenant.

type Queryable = Pick<Pool, 'query'>;

// Selects an EntityRow from canonical_entities e.
const ENTITY_COLUMNS = `e.object, e.external_id, e.sequence, e.event_id, e.occurred_at, e.received_at, e.data,
  (SELECT count(*)::int FROM canonical_entity_versions v
    WHERE v.tenant_id = e.tenant_id AND v.object = e.object AND v.external_id = e.external_id) AS version_count`;

export async function findEntity(pool: Queryable, tenantId: string, object: string, externalId: string): Promise<EntityRow | undefined> {
  const { rows } = await pool.query<EntityRow>(`SELECT ${ENTITY_COLUMNS} FROM canonical_entities e WHERE e.tenant_id = $1 AND e.object = $2 AND e.external_id = $3`, [
    tenantId,
    object,
    externalId,
  ]);
  return rows[0];
}

// The accounts a party holds (at most `limit`, by external id).
export async function partyAccounts(pool: Queryable, tenantId: string, partyId: string, limit: number): Promise<EntityRow[]> {
  const { rows } = await pool.query<EntityRow>(
    `SELECT ${ENTITY_COLUMNS} FROM canonical_entities e
      WHERE e.tenant_id = $1 AND e.object = 'account' AND e.data ->> 'holder_party_id' = $2
      ORDER BY e.external_id LIMIT $3`,
    [tenantId, partyId, limit],
  );
  return rows;
}

interface PostureRow {
  band: 'low' | 'medium' | 'high' | 'critical' | 'incomplete' | null;
  computed_at: Date | null;
  degraded: boolean;
}

export type PostureBand = Omit<z.infer<typeof postureSchema>, 'external_id'>;

// A party's posture band. A band is written when it changes; the party's latest live evaluation
// confirmed it since, so the band was computed as of the later of the two.
export async function loadPosture(pool: Queryable, tenantId: string, partyId: string, now: Date): Promise<PostureBand> {
  const { rows } = await pool.query<PostureRow>(
    `SELECT pp.band, greatest(pp.computed_at, se.evaluated_at) AS computed_at,
            EXISTS (SELECT 1 FROM feed_coverage f WHERE f.tenant_id = $1 AND f.state = 'degraded') AS degraded
       FROM (SELECT 1) one
       LEFT JOIN party_postures pp ON pp.tenant_id = $1 AND pp.party_id = $2
       LEFT JOIN subject_evaluations se ON se.tenant_id = $1 AND se.subject_kind = 'party' AND se.subject_id = $2 AND se.mode = 'live'`,
    [tenantId, partyId],
  );
  return postureView(rows[0]!, now);
}

// Detection has never looked at the party: unknown, with no coverage behind it and no time it was
// computed (not now: a client keeping the newest posture would take a fresh one). The band is the
// one detection computed and announced with risk_state.changed, so a client mirroring posture
// from webhooks reads the same band here. A silent feed, which a low band cannot vouch for, is
// said by the coverage (and announced by coverage.degraded), not by a band no event carried.
function postureView(row: PostureRow, now: Date): PostureBand {
  if (row.band === null || row.computed_at === null) {
    return { band: 'unknown', computed_at: null, staleness_seconds: null, coverage: 'none' };
  }
  const band = row.band;
  const coverage = row.degraded ? 'degraded' : row.band === 'incomplete' ? 'partial' : 'complete';
  const staleness = Math.max(0, Math.floor((now.getTime() - row.computed_at.getTime()) / 1000));
  return { band, computed_at: row.computed_at.toISOString(), staleness_seconds: staleness, coverage };
}

export async function findMovement(pool: Queryable, tenantId: string, externalId: string): Promise<MovementRow | undefined> {
  const { rows } = await pool.query<MovementRow>(`SELECT ${MOVEMENT_COLUMNS} FROM canonical_movements m WHERE m.tenant_id = $1 AND m.external_id = $2`, [
    tenantId,
    externalId,
  ]);
  return rows[0];
}

export type MovementPage =
  | { kind: 'bad_cursor' }
  | { kind: 'not_found' }
  | { kind: 'page'; body: { data: MovementView[]; has_more: boolean; next_cursor?: string } };

// The filters of a party's movement page, as checked by the route's declared query schema
// (query-schemas.ts).
export interface MovementFilters {
  direction: 'in' | 'out' | 'both';
  from?: Date;
  to?: Date;
  limit: number;
  cursor?: string;
}

// A party's movements, newest first, either side or one (direction in: credits, out: debits),
// optionally within [from, to], in keyset pages bound to the tenant, the party and the filters.
export async function movementPage(pool: Queryable, cursors: CursorCodec, tenantId: string, partyId: string, query: MovementFilters): Promise<MovementPage> {
  const { direction, from, to, limit } = query;
  // The window is bound as instants, never as the client's text: PostgreSQL refuses offsets past
  // ±15:59 that RFC 3339 allows. The cursor keeps the instants, so +01:00 and Z name one window.
  const filters = { t: tenantId, p: partyId, d: direction, f: from?.toISOString() ?? null, u: to?.toISOString() ?? null };
  let after: { at: string; eventId: string } | undefined;
  if (query.cursor !== undefined) {
    const payload = cursors.decode(query.cursor);
    const matches = payload && Object.entries(filters).every(([k, v]) => payload[k] === v) && typeof payload.o === 'string' && typeof payload.e === 'string';
    if (!matches) return { kind: 'bad_cursor' };
    after = { at: payload.o as string, eventId: payload.e as string };
  }
  if (!(await findEntity(pool, tenantId, 'party', partyId))) return { kind: 'not_found' };

  const sides = direction === 'in' ? ['credit'] : direction === 'out' ? ['debit'] : ['debit', 'credit'];
  const branches = sides.map(
    (side) => `SELECT m.tenant_id, m.external_id, m.event_id, m.occurred_at FROM canonical_movements m
                WHERE m.tenant_id = $1 AND m.${side}_party_id = $2
                  AND ($3::timestamptz IS NULL OR m.occurred_at >= $3) AND ($4::timestamptz IS NULL OR m.occurred_at <= $4)
                  AND ($5::timestamptz IS NULL OR (m.occurred_at, m.event_id) < ($5::timestamptz, $6::uuid))`,
  );
  const { rows } = await pool.query<MovementRow>(
    `WITH page AS (
       SELECT DISTINCT * FROM (${branches.join(' UNION ALL ')}) b ORDER BY occurred_at DESC, event_id DESC LIMIT $7
     )
     SELECT ${MOVEMENT_COLUMNS}, m.occurred_at::text AS cursor_at
       FROM page p JOIN canonical_movements m ON m.tenant_id = p.tenant_id AND m.external_id = p.external_id
      ORDER BY m.occurred_at DESC, m.event_id DESC`,
    [tenantId, partyId, from ?? null, to ?? null, after?.at ?? null, after?.eventId ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  return {
    kind: 'page',
    body: {
      data: page.map(movementView),
      has_more: hasMore,
      ...(hasMore && last ? { next_cursor: cursors.encode({ ...filters, o: last.cursor_at, e: last.event_id }) } : {}),
    },
  };
}

// The answer to a movement page request: the page, or the problem.
export function sendMovementPage(request: FastifyRequest, reply: FastifyReply, outcome: MovementPage) {
  switch (outcome.kind) {
    case 'bad_cursor':
      return sendProblem(request, reply, 'svc:request/invalid_parameter', {
        detail: 'the cursor is not one this service issued for this party and these filters',
        errors: [{ path: 'cursor', code: 'svc:request/invalid_parameter', message: 'malformed or altered cursor' }],
      });
    case 'not_found':
      return sendProblem(request, reply, 'svc:resource/not_found', { detail: 'no party with this external_id in this tenant' });
    case 'page':
      return outcome.body;
  }
}
