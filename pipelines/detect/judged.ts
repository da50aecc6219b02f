// How far each subject has been judged: the latest instant at which detection judged it for a
// fact. A fact that arrives after later facts of its subject is judged again at those later facts
// (late-facts.ts) only when one of them may have been judged without it. A later fact not judged
// yet will be, and its evaluation reads the late fact, which the stores held before it was judged:
// judging it now as well doubled detection's work whenever detection ran behind the stores (in a
// backlog, facts ahead of nearly every subject are recorded and not yet judged).
//
// Two records tell: judged_subjects, written in the detection commit, and, in this process, the
// evaluations begun and not yet committed, held from before their snapshots are read until their
// commit (an evaluation that read the stores before the late fact was recorded may still be
// running when the late fact is judged). An evaluation in flight in another detect process is
// not seen until it commits: there the two can still miss each other.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';

type Judged = Pick<SubjectWork, 'tenantId' | 'subject' | 'at'>;

export class JudgedSubjects {
  // By subject key: the instants of evaluations in flight, each with how many hold it.
  private readonly inFlight = new Map<string, Map<number, number>>();

  // Holds the work's instants as in flight until the returned release is called.
  hold(work: readonly Judged[]): () => void {
    const held = work.map((item) => [subjectKey(item), item.at.getTime()] as const);
    for (const [key, at] of held) {
      let instants = this.inFlight.get(key);
      if (!instants) this.inFlight.set(key, (instants = new Map()));
      instants.set(at, (instants.get(at) ?? 0) + 1);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const [key, at] of held) {
        const instants = this.inFlight.get(key)!;
        const count = instants.get(at)! - 1;
        if (count > 0) instants.set(at, count);
        else instants.delete(at);
        if (instants.size === 0) this.inFlight.delete(key);
      }
    };
  }

  // The items whose subject has been judged, or is being judged, at their instant or later.
  async judgedBy<T extends Judged>(pool: Pick<Pool, 'query'>, items: readonly T[]): Promise<T[]> {
    if (items.length === 0) return [];
    const { rows } = await pool.query<{ i: number }>({
      name: 'detect-judged-subjects',
      text: `SELECT r.i FROM json_to_recordset($1::json) AS r(i int, t text, k text, s text, a timestamptz)
               JOIN judged_subjects j ON j.tenant_id = r.t AND j.subject_kind = r.k AND j.subject_id = r.s
              WHERE j.judged_to >= r.a`,
      values: [JSON.stringify(items.map((item, i) => ({ i, t: item.tenantId, k: item.subject.kind, s: item.subject.id, a: item.at })))],
    });
    const judged = new Set(rows.map((row) => row.i));
    return items.filter((item, i) => judged.has(i) || this.inFlightFrom(item));
  }

  private inFlightFrom(item: Judged): boolean {
    const instants = this.inFlight.get(subjectKey(item));
    if (!instants) return false;
    for (const at of instants.keys()) if (at >= item.at.getTime()) return true;
    return false;
  }
}

// Notes, in the detection commit, the latest instant each subject was judged at for a fact
// (scheduled evaluations judge no fact: they are left out). A row only moves forward.
export async function noteJudged(db: Pick<Pool, 'query'>, work: readonly SubjectWork[]): Promise<void> {
  const latest = new Map<string, SubjectWork>();
  for (const item of work) {
    if (item.change === null) continue;
    const key = subjectKey(item);
    const seen = latest.get(key);
    if (!seen || seen.at < item.at) latest.set(key, item);
  }
  if (latest.size === 0) return;
  // In key order, so that two commits writing the same subjects lock their rows in one order.
  const rows = [...latest.keys()].sort().map((key) => {
    const item = latest.get(key)!;
    return { t: item.tenantId, k: item.subject.kind, s: item.subject.id, a: item.at };
  });
  await db.query({
    name: 'detect-note-judged',
    text: `INSERT INTO judged_subjects AS j (tenant_id, subject_kind, subject_id, judged_to)
           SELECT t, k, s, a FROM json_to_recordset($1::json) AS r(t text, k text, s text, a timestamptz)
           ON CONFLICT (tenant_id, subject_kind, subject_id) DO UPDATE SET judged_to = EXCLUDED.judged_to
           WHERE j.judged_to < EXCLUDED.judged_to`,
    values: [JSON.stringify(rows)],
  });
}

// A subject's key: its tenant, kind and id.
export function subjectKey(item: Judged): string {
  return `${item.tenantId}\u0000${item.subject.kind}\u0000${item.subject.id}`;
}
