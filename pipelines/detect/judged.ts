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

// In one statement: marks each subject of `marks` as judged up to the latest of its instants, and
// answers which of `asked` had been judged at their instant or later before this mark (a batch's
// own marks are not an earlier judgement). Marks only move forward.
export async function markJudged<T extends Judged>(pool: Pick<Pool, 'query'>, marks: readonly Judged[], asked: readonly T[]): Promise<T[]> {
  const latest = new Map<string, Judged>();
  for (const item of marks) {
    const key = subjectKey(item);
    const seen = latest.get(key);
    if (!seen || seen.at.getTime() < item.at.getTime()) latest.set(key, item);
  }
  if (latest.size === 0 && asked.length === 0) return [];
  const { rows } = await pool.query<{ i: number }>({
    name: 'detect-mark-judged',
    // The marks in key order, so that two statements marking the same subjects lock their rows in
    // one order. The commit does not wait for its WAL flush: a mark matters only with the batch's
    // evaluations, whose commit comes later in the WAL and so flushes it too (a flush per batch
    // of its own made detection wait on the disk). The question reads the rows as they were
    // before the statement.
    text: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
           marked AS (
             INSERT INTO judged_subjects AS j (tenant_id, subject_kind, subject_id, judged_to)
             SELECT t, k, s, a FROM json_to_recordset($1::json) AS m(t text, k text, s text, a timestamptz), unflushed ORDER BY t, k, s
             ON CONFLICT (tenant_id, subject_kind, subject_id) DO UPDATE SET judged_to = EXCLUDED.judged_to
             WHERE j.judged_to < EXCLUDED.judged_to
           )
           SELECT r.i FROM json_to_recordset($2::json) AS r(i int, t text, k text, s text, a timestamptz)
             JOIN judged_subjects j ON j.tenant_id = r.t AND j.subject_kind = r.k AND j.subject_id = r.s
            WHERE j.judged_to >= r.a`,
    values: [
      JSON.stringify([...latest.values()].map((item) => ({ t: item.tenantId, k: item.subject.kind, s: item.subject.id, a: item.at }))),
      JSON.stringify(asked.map((item, i) => ({ i, t: item.tenantId, k: item.subject.kind, s: item.subject.id, a: item.at }))),
    ],
  });
  if (rows.length === 0) return [];
  const judged = new Set(rows.map((row) => row.i));
  return asked.filter((_, i) => judged.has(i));
}

// A subject's key: its tenant, kind and id.
export function subjectKey(item: Judged): string {
  return `${item.tenantId}\u0000${item.subject.kind}\u0000${item.subject.id}`;
}
