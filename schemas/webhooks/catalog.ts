// The webhook event catalog: every event type, its classification and the channels it may be
// delivered on. An event never reaches a channel not listed for it.
export type Channel = 'compliance' | 'operational';
export type Classification = 'restricted_aml' | 'advisory' | 'operational';

export const CHANNELS = ['compliance', 'operational'] as const satisfies readonly Channel[];

export const WEBHOOK_EVENT_CATALOG = {
  'alert.opened': { classification: 'restricted_aml', channels: ['compliance'] },
  'episode.updated': { classification: 'restricted_aml', channels: ['compliance'] },
  'episode.escalated': { classification: 'restricted_aml', channels: ['compliance'] },
  'episode.resolved': { classification: 'restricted_aml', channels: ['compliance'] },
  'episode.reopened': { classification: 'restricted_aml', channels: ['compliance'] },
  'case.status_changed': { classification: 'restricted_aml', channels: ['compliance'] },
  'case.disposed': { classification: 'restricted_aml', channels: ['compliance'] },
  'risk_state.changed': { classification: 'restricted_aml', channels: ['compliance'] },
  'recommendation.issued': { classification: 'advisory', channels: ['operational'] },
  'coverage.degraded': { classification: 'operational', channels: ['compliance', 'operational'] },
  'coverage.recovered': { classification: 'operational', channels: ['compliance', 'operational'] },
  'import.progress': { classification: 'operational', channels: ['operational'] },
  'import.completed': { classification: 'operational', channels: ['operational'] },
  'import.failed': { classification: 'operational', channels: ['operational'] },
  'ruleset.candidate_ready': { classification: 'operational', channels: ['compliance'] },
  'ruleset.activated': { classification: 'operational', channels: ['compliance'] },
  'ruleset.rolled_back': { classification: 'operational', channels: ['compliance'] },
  'conformance.drift_detected': { classification: 'operational', channels: ['operational'] },
  'webhook.test': { classification: 'operational', channels: ['compliance', 'operational'] },
} as const satisfies Record<string, { classification: Classification; channels: readonly Channel[] }>;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_CATALOG;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENT_CATALOG) as WebhookEventType[];

export function isWebhookEventType(type: string): type is WebhookEventType {
  return Object.hasOwn(WEBHOOK_EVENT_CATALOG, type);
}

export function deliverableOn(type: WebhookEventType, channel: Channel): boolean {
  return (WEBHOOK_EVENT_CATALOG[type].channels as readonly Channel[]).includes(channel);
}
