// Canonical change records: what the canonical pipeline tells the stores downstream of it (the
// network graph, the behavioural aggregates, detection) about each event it has made canonical.
// One record per processed event, on topic `canonical.<family>`, JSON today (Avro on Kafka).
// Identifying values are already keyed hashes (`*_hash`), exactly as in the canonical model.

import type { Family } from '../families/index.ts';

export const CANONICAL_CHANGE_TOPIC_PREFIX = 'canonical.';

export function canonicalChangeTopic(family: Family): string {
  return `${CANONICAL_CHANGE_TOPIC_PREFIX}${family}`;
}

interface ChangeMoney {
  // Integer minor units, as a decimal string.
  value: string;
  asset: string;
  scale: number;
}

interface ChangeBase {
  tenant_id: string;
  event_id: string;
  external_id: string;
  occurred_at: string;
  received_at: string;
  // The event came in through a historical import (the backfill before the import's go-live
  // watermark): the stores take it in as context, detection does not evaluate it as it arrives
  // (decision 0058). Absent on records written before the flag existed: those were live.
  historical?: boolean;
}

// A version of a party, account, instrument or relationship.
export interface EntityChange extends ChangeBase {
  object: 'party' | 'account' | 'instrument' | 'relationship';
  sequence: number | null;
  // This version became the entity's current one (the highest sequence seen when it was written).
  // A later, higher version supersedes it; consumers keep the highest sequence they have applied.
  current: boolean;
  data: Record<string, unknown>;
}

export interface MovementLeg {
  account_id: string | null;
  // The leg's party, else its account's holder.
  party_id: string | null;
  // The counterparty's declared country, else the account's jurisdiction.
  country: string | null;
}

export interface MovementChange extends ChangeBase {
  object: 'movement';
  type: string;
  status: string;
  amount: ChangeMoney;
  // The amount in the tenant's base asset at event time; null when no FX rate was available.
  base_amount: ChangeMoney | null;
  debit: MovementLeg;
  credit: MovementLeg;
  data: Record<string, unknown>;
}

// The movement a correction supersedes (links.correction_of), as the reconciliation ledger reads
// it (decision 0024): a correction that itself failed corrects nothing, nor does one naming
// itself. Detection's stores then hold the correction alone (decision 0064).
export function correctedMovementOf(change: MovementChange): string | null {
  if (change.status === 'failed') return null;
  const links = change.data.links;
  const original = links !== null && typeof links === 'object' && !Array.isArray(links) ? (links as Record<string, unknown>).correction_of : undefined;
  return typeof original === 'string' && original !== change.external_id ? original : null;
}

export interface ControlEventChange extends ChangeBase {
  object: 'control_event';
  type: string;
  subject: { kind: string; external_id: string };
  // The subject party, or the holder of the subject account.
  subject_party_id: string | null;
  data: Record<string, unknown>;
}

export type CanonicalChange = EntityChange | MovementChange | ControlEventChange;

// The bus key of a change record: an entity's versions share one partition (so they stay in
// order); a movement goes with its debit account, so one transfer pair is always updated from
// one partition; a control event goes with its subject.
export function changePartitionKey(change: CanonicalChange): string {
  switch (change.object) {
    case 'movement': {
      const leg = change.debit.account_id ? `account/${change.debit.account_id}` : `movement/${change.external_id}`;
      return `${change.tenant_id}/${leg}`;
    }
    case 'control_event':
      return `${change.tenant_id}/${change.subject.kind}/${change.subject.external_id}`;
    default:
      return `${change.tenant_id}/${change.object}/${change.external_id}`;
  }
}
