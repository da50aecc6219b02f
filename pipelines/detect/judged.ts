// How far each subject has been judged: the latest instant at which detection began judging it
// for a fact. A fact that arrives after later facts of its subject is judged again at those later
// facts (late-facts.ts) only when one of them may have been judged without it. A later fact not
// judged yet will be, and its evaluation reads the late fact, which the stores held before it was
// judged: judging it now as well doubled detection's work whenever detection ran behind the stores
// (in a backlog, facts ahead of nearly every subject are recorded and not yet judged).
//
// A batch marks its subjects in judged_subjects, committed before it reads the stores for them,
// at the latest instant it may judge each at. So a detect process that misses the mark (it asked
// before the mark was committed) asked after its late fact was recorded, and the marking batch,
// reading after its mark, holds that fact: every evaluation that may have missed a late fact is
// seen, whichever process runs it. A batch that fails after marking leaves a mark ahead of what
// was judged; a late fact then costs an evaluation that was not needed, never a missed one.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';

type Judged = Pick<SubjectWork, 'tenantId' | 'subject' | 'at'>;

// In one statement: marks each subject of `work` as judged up to `reachMs` past the latest of its
// instants here, and answers, by subject key, how far each had been judged before this mark (a
// batch's own marks are not an earlier judgement), only for subjects judged beyond `reachMs` past
// their earliest instant here: only they may have a fact further ahead judged. Marks only move
// forward.
export async function markJudged(pool: Pick<Pool, 'query'>, work: readonly Judged[], reachMs: number): Promise<Map<string, Date>> {
  const span = new Map<string, { item: Judged; from: number; to: number }>();
  for (const item of work) {
    const key = subjectKey(item);
    const at = item.at.getTime();
    const seen = span.get(key);
    if (!seen) span.set(key, { item, from: at, to: at });
    else if (at < seen.from) seen.from = at;
    else if (at > seen.to) seen.to = at;
  }
  if (span.size === 0) return new Map();
  const { rows } = await pool.query<{ t: string; k: string; s: string; judged_to: Date }>({
    name: 'detect-mark-judged',
    // The marks in key order, so that two statements marking the same subjects lock their rows in
    // one order. The commit does not wait for its WAL flush: a mark matters only with the batch's
    // evaluations, whose commit comes later in the WAL and so flushes it too (a flush per batch
    // of its own made detection wait on the disk). The answer reads the rows as they were before
    // the statement. Instants travel as epoch milliseconds: a Date per mark, written out as ISO
    // text and parsed back, cost the batch more than the rest of the marks' JSON.
    text: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
           marks AS (
             SELECT t, k, s, to_timestamp(fm / 1000.0::float8) AS f, to_timestamp(am / 1000.0::float8) AS a
               FROM json_to_recordset($1::json) AS m(t text, k text, s text, fm bigint, am bigint)
           ),
           marked AS (
             INSERT INTO judged_subjects AS j (tenant_id, subject_kind, subject_id, judged_to)
             SELECT t, k, s, a FROM marks, unflushed ORDER BY t, k, s
             ON CONFLICT (tenant_id, subject_kind, subject_id) DO UPDATE SET judged_to = EXCLUDED.judged_to
             WHERE j.judged_to < EXCLUDED.judged_to
           )
           SELECT m.t, m.k, m.s, j.judged_to FROM marks m
             JOIN judged_subjects j ON j.tenant_id = m.t AND j.subject_kind = m.k AND j.subject_id = m.s
            WHERE j.judged_to > m.f`,
    values: [
      JSON.stringify(
        [...span.values()].map(({ item, from, to }) => ({ t: item.tenantId, k: item.subject.kind, s: item.subject.id, fm: from + reachMs, am: to + reachMs })),
      ),
    ],
  });
  return new Map(rows.map((row) => [subjectKey({ tenantId: row.t, subject: { kind: row.k as SubjectWork['subject']['kind'], id: row.s } }), row.judged_to]));
}

// A subject's key: its tenant, kind and id.
export function subjectKey(item: Pick<SubjectWork, 'tenantId' | 'subject'>): string {
  return `${item.tenantId}\u0000${item.subject.kind}\u0000${item.subject.id}`;
}
