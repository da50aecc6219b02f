// A payload of each event type that parses with its declared schema (schemas/webhooks/payloads.ts),
// for tests that need an event of a type in the outbox without driving the module that emits it.
import { ID_PREFIXES } from '../../platform/ids.ts';
import type { WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import type { WebhookEventData } from '../../schemas/webhooks/payloads.ts';
import type { OutgoingEvent } from './outgoing-events.ts';

const id = (n: number) => `01900000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const AT = '2026-09-01T12:00:00.000Z';
const episode = (n: number) => ({ episode_id: `${ID_PREFIXES.episode}${id(n)}`, status: 'open' as const, severity: 'high' as const, alert_count: 2 });
const caseAction = (n: number) => ({
  ...episode(n),
  previous_status: 'open' as const,
  case_status: 'investigating' as const,
  previous_case_status: 'open' as const,
  disposition: null,
  previous_disposition: null,
  case_action_seq: 1,
});
const counts = (n: number) => ({
  import_id: `${ID_PREFIXES.import}${id(n)}`,
  family: 'movement' as const,
  chunks_landed: 1,
  chunk_count: 2,
  rows_read: 10,
  accepted: 9,
  duplicates: 0,
  rejected: 1,
  skipped: 0,
});

type Samples = { [T in WebhookEventType]: (n: number) => WebhookEventData<T> };

const SAMPLES: Samples = {
  'alert.opened': (n) => ({
    alert_id: `${ID_PREFIXES.alert}${id(n)}`,
    detector: 'fan_in',
    typology: 'fan_in',
    severity: 'medium',
    score: 0.75,
    subject: { kind: 'account', external_id: `A-${n}` },
    window: { from: '2026-09-01T11:50:00.000Z', to: AT },
    summary: `ünïcode & spaces  kept (${n})`,
  }),
  'episode.updated': (n) => ({ ...episode(n), change: 'alert_added', alert_id: `${ID_PREFIXES.alert}${id(n)}` }),
  'episode.escalated': (n) => ({ ...episode(n), status: 'escalated', reason: 'threshold', alert_id: `${ID_PREFIXES.alert}${id(n)}` }),
  'episode.resolved': (n) => ({ ...caseAction(n), status: 'resolved', case_status: 'closed', disposition: 'false_positive' }),
  'episode.reopened': (n) => ({ ...episode(n), status: 'reopened', reason: 'new_alert', alert_id: `${ID_PREFIXES.alert}${id(n)}` }),
  'case.status_changed': (n) => ({ ...caseAction(n), reason: 'case_action' }),
  'case.disposed': (n) => ({ ...caseAction(n), status: 'resolved', case_status: 'closed', disposition: 'no_further_action' }),
  'risk_state.changed': (n) => ({ subject: { kind: 'party', external_id: `P-${n}` }, band: 'high', previous_band: 'low', computed_at: AT, episode_id: episode(n).episode_id }),
  'recommendation.issued': (n) => ({
    subject: { kind: 'party', external_id: `P-${n}` },
    band: 'high',
    severity: 'high',
    recommendation: 'enhanced_review',
    episode_id: episode(n).episode_id,
  }),
  'coverage.degraded': () => ({ reason: 'feed_silence', family: 'movement', last_received_at: '2026-09-01T10:00:00.000Z', degraded_at: AT, silence_minutes: 60 }),
  'coverage.recovered': () => ({ reason: 'feed_silence', family: 'movement', silent_since: '2026-09-01T10:00:00.000Z', recovered_at: AT }),
  'import.progress': (n) => ({ ...counts(n), chunk_no: 0 }),
  'conformance.drift_detected': (n) => ({
    family: 'movement',
    detected_at: AT,
    window: { from: '2026-09-01T11:05:00.000Z', to: AT },
    received: 400 + n,
    refused: 40,
    refused_share: 0.1,
    baseline: { from: '2026-08-25T11:05:00.000Z', to: '2026-09-01T11:05:00.000Z', received: 7000, refused: 70, refused_share: 0.01 },
    problems: [{ code: 'svc:validation/schema', path: 'event.data.amount.value', items: 40 }],
  }),
  'import.completed': (n) => counts(n),
  'import.failed': (n) => ({ ...counts(n), failure: 'chunk 1 could not be landed' }),
  'ruleset.candidate_ready': (n) => ({ version: n + 1, stage: 'created', name: 'tuned thresholds' }),
  'ruleset.activated': (n) => ({ version: n + 1, previous_version: 0 }),
  'ruleset.rolled_back': (n) => ({ from_version: n + 1, to_version: 0 }),
  'webhook.test': (n) => ({ endpoint_id: `${ID_PREFIXES.webhookEndpoint}${id(n)}`, channel: 'operational', message: 'webhook.test', sent_at: AT }),
};

export const SAMPLED_TYPES = Object.keys(SAMPLES) as Array<keyof Samples>;

export function samplePayload<T extends keyof Samples>(type: T, n = 0): WebhookEventData<T> {
  return SAMPLES[type](n) as WebhookEventData<T>;
}

export function sampleEvent(tenantId: string, type: keyof Samples, n = 0): OutgoingEvent {
  return { tenantId, type, data: samplePayload(type, n) } as OutgoingEvent;
}
