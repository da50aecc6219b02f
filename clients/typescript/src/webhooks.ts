// Receiving webhooks: signature verification over the raw body, and typed envelopes.
// Importable alone as `@svc-controlplane/client/webhooks`.
export { verifyWebhookSignature, parseSignatureHeader, type VerifyOptions, type WebhookVerification } from './webhook-signature.ts';
export { constructWebhookEvent, type WebhookEventResult } from './webhook-event.ts';
export { WEBHOOK_CLASSIFICATIONS } from './generated/webhook-catalog.ts';
export type { WebhookEnvelope } from './generated/api-types.ts';
