import type { BucketLimits, BucketState } from '../rate-limit/token-buckets.ts';

// What a signed request still owes before its events may be written: its nonce, which the
// authentication hook verified but left to the route to claim, and its cost in events, charged to
// its tenant's bucket. Both are settled in the statement that writes the events (accept-events.ts).
export interface Admission {
  tenantId: string;
  keyId: string;
  nonce: string;
  // When the request was authenticated: the nonce's claim time.
  at: Date;
  // A batch costs its item count, valid or not.
  cost: number;
  limits: BucketLimits;
}

export type AdmissionOutcome =
  // The nonce was used within the window: answered 401, nothing charged or written.
  | { kind: 'replayed' }
  // Charged; its events were written (or it had none).
  | { kind: 'admitted'; bucket: BucketState }
  // Over the limit: answered 429, nothing charged or written.
  | { kind: 'limited'; bucket: BucketState };
