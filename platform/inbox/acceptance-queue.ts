import { coalescing } from '../batching/coalesce.ts';
import type { Pool } from '../postgres/pool.ts';
import type { BucketLimits, TokenBuckets } from '../rate-limit/token-buckets.ts';
import { acceptGroup, admitAndAccept, type AcceptOutcome, type AdmissionVerdict, type GroupOutcomes, type PreparedEvent } from './accept-events.ts';
import type { Admission, AdmissionOutcome } from './admission.ts';

export interface Accepted {
  // Present when the submission carried an admission.
  admission?: AdmissionOutcome;
  // One per event, in order; none when the admission was refused (nothing was written).
  outcomes: AcceptOutcome[];
}

interface Submission {
  events: PreparedEvent[];
  admission?: Admission;
  resolve: (accepted: Accepted) => void;
  reject: (error: unknown) => void;
}

const MAX_EVENTS_PER_COMMIT = 5_000;
const RETRYABLE = new Set(['40001', '40P01']);

// Group commit for acceptance. Submissions that arrive while a commit is in flight wait and go
// together in the next one: one statement and one WAL flush for many requests, each answered
// only after the commit that holds its events. A submission is never split across commits, so a
// batch is accepted in one transaction. A submission may carry its request's admission (nonce
// and rate-limit charge), settled in the same statement: one round trip per request.
export class AcceptanceQueue {
  private queue: Submission[] = [];
  private inFlight = 0;
  private readonly schedulePump = coalescing(() => this.pump());

  constructor(
    private readonly pool: Pool,
    private readonly buckets: TokenBuckets,
    private readonly maxInFlight = 2,
  ) {}

  submit(events: PreparedEvent[], admission?: Admission): Promise<Accepted> {
    if (events.length === 0 && !admission) return Promise.resolve({ outcomes: [] });
    return new Promise((resolve, reject) => {
      this.queue.push({ events, ...(admission ? { admission } : {}), resolve, reject });
      this.schedulePump();
    });
  }

  // An admission alone: the request's events are written later, or never (POST /v1/validate).
  async admit(admission: Admission): Promise<AdmissionOutcome> {
    return (await this.submit([], admission)).admission!;
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const group: Submission[] = [];
      let size = 0;
      while (this.queue.length > 0 && (group.length === 0 || size + this.queue[0]!.events.length <= MAX_EVENTS_PER_COMMIT)) {
        const next = this.queue.shift()!;
        group.push(next);
        size += next.events.length;
      }
      this.inFlight++;
      void this.commit(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async commit(group: Submission[]): Promise<void> {
    try {
      if (group.some((s) => s.admission)) await this.commitAdmitting(group);
      else await this.commitEvents(group);
    } catch (error) {
      for (const submission of group) submission.reject(error);
    }
  }

  private async commitEvents(group: Submission[]): Promise<void> {
    const events = group.flatMap((s) => s.events);
    const { outcomes, unresolved } = await retried(() => acceptGroup(this.pool, events));
    let offset = 0;
    for (const submission of group) {
      const failure = unresolvedIn(unresolved, offset, submission.events.length);
      if (failure) submission.reject(failure.error);
      else submission.resolve({ outcomes: outcomes.slice(offset, offset + submission.events.length) as AcceptOutcome[] });
      offset += submission.events.length;
    }
  }

  private async commitAdmitting(group: Submission[]): Promise<void> {
    // A nonce repeated within the group: the first claims it, the others are replays. Each
    // tenant is charged at one set of limits (its first request's).
    const admissions: Admission[] = [];
    const slotOf = new Map<Submission, number>();
    const claims = new Set<string>();
    const limitsOf = new Map<string, BucketLimits>();
    const sent: Submission[] = [];
    for (const submission of group) {
      const admission = submission.admission;
      if (admission) {
        const claim = `${admission.tenantId}\u0000${admission.keyId}\u0000${admission.nonce}`;
        if (claims.has(claim)) {
          submission.resolve({ admission: { kind: 'replayed' }, outcomes: [] });
          continue;
        }
        claims.add(claim);
        if (!limitsOf.has(admission.tenantId)) limitsOf.set(admission.tenantId, admission.limits);
        slotOf.set(submission, admissions.length);
        admissions.push({ ...admission, limits: limitsOf.get(admission.tenantId)! });
      }
      sent.push(submission);
    }
    const events = sent.flatMap((s) => s.events);
    const admissionOf = sent.flatMap((s) => s.events.map(() => slotOf.get(s) ?? null));
    const now = admissions.reduce((latest, a) => (a.at > latest ? a.at : latest), admissions[0]!.at);
    const { verdicts, outcomes, unresolved } = await retried(() => admitAndAccept(this.pool, admissions, events, admissionOf, now));

    const unbucketed: Submission[] = [];
    let offset = 0;
    for (const submission of sent) {
      const own = outcomes.slice(offset, offset + submission.events.length);
      const failure = unresolvedIn(unresolved, offset, submission.events.length);
      offset += submission.events.length;
      if (failure) {
        submission.reject(failure.error);
        continue;
      }
      const slot = slotOf.get(submission);
      if (slot === undefined) {
        submission.resolve({ outcomes: own as AcceptOutcome[] });
        continue;
      }
      const verdict = verdicts[slot]!;
      if (verdict.kind === 'unbucketed') unbucketed.push(submission);
      else submission.resolve(this.settled(admissions[slot]!, verdict, own));
    }
    if (unbucketed.length > 0) await this.resend(unbucketed);
  }

  private settled(admission: Admission, verdict: Exclude<AdmissionVerdict, { kind: 'unbucketed' }>, outcomes: (AcceptOutcome | undefined)[]): Accepted {
    if (verdict.kind === 'replayed') return { admission: verdict, outcomes: [] };
    const bucket = this.buckets.settle(admission.tenantId, admission.limits, verdict.tokens, verdict.granted, admission.cost);
    return verdict.granted ? { admission: { kind: 'admitted', bucket }, outcomes: outcomes as AcceptOutcome[] } : { admission: { kind: 'limited', bucket }, outcomes: [] };
  }

  // Nothing of these was claimed, charged or written: their tenants' rows are made again, and
  // they go in the next group.
  private async resend(submissions: Submission[]): Promise<void> {
    for (const tenantId of new Set(submissions.map((s) => s.admission!.tenantId))) await this.buckets.recreate(tenantId);
    this.queue.unshift(...submissions);
    this.schedulePump();
  }
}

// The group committed, but what some of its events repeat could not be read: only a submission
// holding one of them fails (its events are committed; sent again, they come back as duplicates).
function unresolvedIn(unresolved: GroupOutcomes['unresolved'], from: number, count: number): GroupOutcomes['unresolved'] {
  if (!unresolved) return undefined;
  for (let i = from; i < from + count; i++) if (unresolved.events.has(i)) return unresolved;
  return undefined;
}

// A serialization failure or deadlock rolled the whole statement back: it is sent once more.
async function retried<T>(write: () => Promise<T>): Promise<T> {
  return write().catch((error: { code?: string }) => {
    if (error.code && RETRYABLE.has(error.code)) return write();
    throw error;
  });
}
