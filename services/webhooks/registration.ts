// The rules an endpoint registration must pass, as values: its shape, then each event type against
// the catalog and the endpoint's channel, then the destination (HTTPS, a public address, also
// after resolution). Every finding is reported with its own path and code; the problem carries the
// most fundamental one. Messages never quote the submitted URL (it may carry a token).
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { deliverableOn, isWebhookEventType, WEBHOOK_EVENT_CATALOG, type WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import { endpointRegistrationSchema, type EndpointRegistration } from '../../schemas/webhooks/resources.ts';
import { checkDestination, type DestinationPolicy } from './destination.ts';

export type RegistrationCheck =
  | { ok: true; registration: EndpointRegistration & { event_types: WebhookEventType[] } }
  | { ok: false; code: ErrorCode; errors: FieldError[] };

const PRECEDENCE: ErrorCode[] = ['svc:validation/schema', 'svc:webhook/event_not_deliverable', 'svc:webhook/destination_refused'];

export async function checkRegistration(body: unknown, policy: DestinationPolicy): Promise<RegistrationCheck> {
  const parsed = endpointRegistrationSchema.safeParse(body);
  if (!parsed.success) {
    return { ok: false, code: 'svc:validation/schema', errors: requestSchemaErrors(parsed.error) };
  }
  const registration = parsed.data;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  registration.event_types.forEach((type, i) => {
    const path = `event_types.${i}`;
    if (!isWebhookEventType(type)) errors.push({ path, code: 'svc:validation/schema', message: 'not an event type of the catalog' });
    else if (seen.has(type)) errors.push({ path, code: 'svc:validation/schema', message: 'repeats an earlier event type' });
    else if (!deliverableOn(type, registration.channel)) {
      errors.push({
        path,
        code: 'svc:webhook/event_not_deliverable',
        message: `${withArticle(WEBHOOK_EVENT_CATALOG[type].classification)} event deliverable only on ${WEBHOOK_EVENT_CATALOG[type].channels.join(' and ')}, not on ${registration.channel}`,
      });
    }
    seen.add(type);
  });
  const destination = await checkDestination(registration.url, policy);
  if (!destination.ok) errors.push({ path: 'url', code: 'svc:webhook/destination_refused', message: destination.message });
  if (errors.length > 0) return { ok: false, code: PRECEDENCE.find((c) => errors.some((e) => e.code === c))!, errors };
  return { ok: true, registration: { ...registration, event_types: registration.event_types as WebhookEventType[] } };
}

// The message is read by people: "an advisory event", "an operational event", "a restricted_aml event".
function withArticle(classification: string): string {
  return `${/^[aeiou]/.test(classification) ? 'an' : 'a'} ${classification}`;
}
