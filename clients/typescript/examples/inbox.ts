import type { WebhookEnvelope } from '../src/webhooks.ts';

/**
 * Where a receiver puts verified deliveries before acknowledging them: acknowledge fast, process
 * later. `add` resolves false when the envelope id was already taken in: delivery is at least
 * once, so a repeat is acknowledged again and not processed twice.
 */
export interface WebhookInbox {
  add(event: WebhookEnvelope): Promise<boolean>;
}

/**
 * For the examples only. In production use your database: a table with a unique key on the
 * envelope id (`INSERT … ON CONFLICT DO NOTHING`), read by a worker.
 */
export class MemoryInbox implements WebhookInbox {
  readonly events = new Map<string, WebhookEnvelope>();

  async add(event: WebhookEnvelope): Promise<boolean> {
    if (this.events.has(event.id)) return false;
    this.events.set(event.id, event);
    return true;
  }
}

/** The secrets to verify with: the current one, and the previous one during a rotation. */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return [env.SVC_WEBHOOK_SECRET, env.SVC_WEBHOOK_PREVIOUS_SECRET].filter((s): s is string => !!s);
}
