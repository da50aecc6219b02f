// Receiving webhooks: signature verification over the raw body, and typed envelopes.
// Importable alone as `@svc-controlplane/client/webhooks`.
import type { WebhookEnvelope } from './generated/api-types.ts';
export { verifyWebhookSignature, parseSignatureHeader, type VerifyOptions, type WebhookVerification } from './webhook-signature.ts';
export { constructWebhookEvent, type WebhookEventResult } from './webhook-event.ts';
export { WEBHOOK_CLASSIFICATIONS } from './generated/webhook-catalog.ts';
export type { WebhookEnvelope } from './generated/api-types.ts';

/**
 * The envelope of one event type, its `data` typed as that type declares: narrow on `event.type`
 * (a switch) or name the type, e.g. `WebhookEventOf<'alert.opened'>['data']`. Where a type has
 * several causes, `data.reason` (for ruleset.candidate_ready, `data.stage`) tells them apart.
 */
export type WebhookEventOf<T extends WebhookEnvelope['type']> = Extract<WebhookEnvelope, { type: T }>;
