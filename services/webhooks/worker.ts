// services/webhooks: the delivery worker. It fans outbox events out to subscribed endpoints, claims
// due deliveries and sends them, many at once: at most `concurrency` attempts in flight and at most
// `endpointConcurrency` of them to one endpoint (one while its last attempt got no answer), so a
// slow or hanging endpoint holds a few slots (each for at most the attempt timeout) and never the
// others. Outcomes are written in batches.
// Delivery is at least once: an attempt whose outcome was not recorded (a crash) is made again
// once its lease runs out.
import type { Clock } from '../../platform/clock.ts';
import { WakeablePause } from '../../platform/wakeable-pause.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { DeliveryStatus } from '../../schemas/webhooks/resources.ts';
import { DeliveryStore, type AttemptRecord, type ClaimedDelivery } from './delivery-store.ts';
import { secretBinding } from './endpoints.ts';
import { buildEnvelope } from './envelope.ts';
import { nextAttemptAt, type RetryPolicy } from './retry-schedule.ts';
import type { AttemptResult, WebhookSender } from './sender.ts';
import { signatureHeader } from '../../clients/typescript/src/signing.ts';

export interface DeliveryWorkerOptions {
  pool: Pool;
  clock: Clock;
  box: SecretBox;
  sender: WebhookSender;
  concurrency: number;
  endpointConcurrency: number;
  attemptTimeoutMs: number;
  horizonMs: number;
  random?: () => number;
  retryPolicy?: RetryPolicy;
  // Idle wait between looks at the outbox and the due deliveries.
  pollMs?: number;
  onError?: (error: unknown) => void;
}

const FAN_OUT_BATCH = 500;
const CLAIM_BATCH = 200;
const FLUSH_AT = 200;
const FLUSH_AFTER_MS = 10;
// A claimed delivery is retried by another worker once its attempt is this long overdue.
const LEASE_MARGIN_MS = 30_000;
// Woken by finished attempts, the loop lets a few more finish before claiming: one claim for the
// slots freed meanwhile rather than one per slot.
const GATHER_MS = 5;
const CLAIM_PASSES = 4;
// The slots of an endpoint whose last attempt got no answer at all (a timeout, a refused or
// dropped connection): a receiver that hangs holds one slot, not endpointConcurrency, so that a few
// hanging endpoints (their backlog the oldest work due) never hold every slot of the worker.
const UNANSWERED_SLOTS = 1;
// Endpoints remembered as unanswered, at most (the oldest forgotten first).
const UNANSWERED_REMEMBERED = 10_000;
const SETTLE_EVERY_MS = 10_000;

export class DeliveryWorker {
  private readonly store: DeliveryStore;
  private readonly random: () => number;
  private readonly inFlight = new Map<string, number>();
  // Endpoints whose last attempt from this worker got no HTTP answer.
  private readonly unanswered = new Set<string>();
  private inFlightTotal = 0;
  private readonly attempts = new Set<Promise<void>>();
  private pending: AttemptRecord[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | undefined;
  private running = false;
  private lastSettle = Number.NEGATIVE_INFINITY;
  private loop: Promise<void> | undefined;
  private readonly pause = new WakeablePause();

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.store = new DeliveryStore(options.pool, options.onError ? { onError: options.onError } : {});
    this.random = options.random ?? Math.random;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  // Stops claiming, lets the attempts in flight finish (each ends by its timeout) and records them.
  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
    await this.settle();
  }

  // One pass: fan out, claim and start what fits. Returns what it did (tests drive it directly).
  async step(): Promise<{ fannedOut: number; claimed: number }> {
    const now = this.options.clock.now();
    const fannedOut = await this.store.fanOut(now, FAN_OUT_BATCH, this.options.horizonMs);
    // Lost probes are rare; looking for them costs a scan of the due deliveries, so not every step.
    if (performance.now() - this.lastSettle >= SETTLE_EVERY_MS) {
      this.lastSettle = performance.now();
      await this.store.settleExhausted(now);
    }
    // A claim looks at the oldest due deliveries first; when one endpoint's backlog fills its
    // slots, the next pass skips it (now full) and reaches the others behind it.
    let claimedTotal = 0;
    for (let pass = 0; pass < CLAIM_PASSES; pass++) {
      const room = Math.min(this.options.concurrency - this.inFlightTotal, CLAIM_BATCH);
      if (room <= 0) break;
      const free = new Map<string, number>();
      for (const endpoint of this.unanswered) free.set(endpoint, UNANSWERED_SLOTS);
      for (const [endpoint, count] of this.inFlight) free.set(endpoint, this.slotsOf(endpoint) - count);
      const claimed = await this.store.claim({
        now,
        limit: room,
        perEndpoint: this.options.endpointConcurrency,
        free,
        leaseMs: this.options.attemptTimeoutMs + LEASE_MARGIN_MS,
      });
      const stopped = await this.store.stoppedEndpoints([...new Set(claimed.filter((d) => d.endpoint_status === 'enabled' && !d.endpoint_deleted).map((d) => d.endpoint_id))]);
      for (const delivery of claimed) this.launch(stopped.has(delivery.endpoint_id) ? { ...delivery, endpoint_status: 'disabled' } : delivery);
      claimedTotal += claimed.length;
      // Another pass only helps when an endpoint's slots, not the due rows, ran out.
      const capped = claimed.some((d) => (this.inFlight.get(d.endpoint_id) ?? 0) >= this.slotsOf(d.endpoint_id));
      if (claimed.length === 0 || claimed.length === room || !capped) break;
    }
    return { fannedOut, claimed: claimedTotal };
  }

  // Waits for every attempt in flight and writes every outcome.
  async settle(): Promise<void> {
    while (this.attempts.size > 0) await Promise.all(this.attempts);
    await this.flush();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const { fannedOut, claimed } = await this.step();
        const busy = this.inFlightTotal >= this.options.concurrency;
        // More is likely waiting when a batch came back full; otherwise rest until woken.
        if (fannedOut < FAN_OUT_BATCH && (claimed === 0 || busy)) {
          const woken = await this.pause.for(this.options.pollMs ?? 250);
          if (woken && this.running) await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
        }
      } catch (error) {
        this.options.onError?.(error);
        await this.pause.for(1000);
      }
    }
  }


  private launch(delivery: ClaimedDelivery): void {
    this.inFlight.set(delivery.endpoint_id, (this.inFlight.get(delivery.endpoint_id) ?? 0) + 1);
    this.inFlightTotal += 1;
    const attempt = this.attempt(delivery)
      .catch((error: unknown) => {
        // Unexpected (a secret that does not open, say): logged, and recorded as a failed attempt
        // so the retry schedule and dead-lettering apply as to any other failure.
        this.options.onError?.(error);
        this.enqueueRecord(delivery, { ok: false, startedAt: this.options.clock.now(), latencyMs: 0, responseStatus: null, error: 'internal error (logged by the service)', responseExcerpt: null });
      })
      .finally(() => {
        this.attempts.delete(attempt);
        const left = (this.inFlight.get(delivery.endpoint_id) ?? 1) - 1;
        if (left === 0) this.inFlight.delete(delivery.endpoint_id);
        else this.inFlight.set(delivery.endpoint_id, left);
        this.inFlightTotal -= 1;
        this.pause.wake();
      });
    this.attempts.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const startedAt = this.options.clock.now();
    if (delivery.endpoint_deleted || delivery.endpoint_status !== 'enabled') {
      return this.settleWithout(delivery, startedAt, 'cancelled', 'endpoint disabled or deleted');
    }
    const envelope = buildEnvelope(
      {
        tenantId: delivery.tenant_id,
        envelopeId: delivery.envelope_id,
        type: delivery.type,
        classification: delivery.classification,
        createdAt: delivery.event_created_at,
        data: delivery.data,
      },
      delivery.channel,
      { attempt: delivery.attempts, deliveryId: delivery.delivery_id },
    );
    if (!envelope.ok) return this.settleWithout(delivery, startedAt, 'dead_lettered', `not sent: ${envelope.reason}`);

    const secrets = [this.options.box.open(delivery.secret_sealed, secretBinding(delivery.endpoint_id)).toString('utf8')];
    if (delivery.previous_secret_sealed && delivery.previous_secret_valid_until && delivery.previous_secret_valid_until > startedAt) {
      secrets.push(this.options.box.open(delivery.previous_secret_sealed, secretBinding(delivery.endpoint_id)).toString('utf8'));
    }
    for (const sealed of delivery.retired_secrets_sealed) secrets.push(this.options.box.open(sealed, secretBinding(delivery.endpoint_id)).toString('utf8'));
    const t = Math.floor(startedAt.getTime() / 1000);
    const headers = {
      'svc-webhook-signature': signatureHeader(t, envelope.body, secrets),
      'svc-webhook-timestamp': String(t),
      'svc-webhook-id': envelope.envelopeId,
    };
    const result = await this.options.sender.send(delivery.url, headers, envelope.body, startedAt);
    this.noteAnswer(delivery.endpoint_id, result.responseStatus !== null);
    this.enqueueRecord(delivery, result);
  }

  private slotsOf(endpoint: string): number {
    return this.unanswered.has(endpoint) ? UNANSWERED_SLOTS : this.options.endpointConcurrency;
  }

  private noteAnswer(endpoint: string, answered: boolean): void {
    this.unanswered.delete(endpoint);
    if (answered) return;
    this.unanswered.add(endpoint);
    if (this.unanswered.size > UNANSWERED_REMEMBERED) this.unanswered.delete(this.unanswered.values().next().value!);
  }

  private settleWithout(delivery: ClaimedDelivery, at: Date, status: DeliveryStatus, error: string): void {
    this.enqueueRecord(delivery, { ok: false, startedAt: at, latencyMs: 0, responseStatus: null, error, responseExcerpt: null }, status);
  }

  private enqueueRecord(delivery: ClaimedDelivery, result: AttemptResult, forced?: DeliveryStatus): void {
    const now = this.options.clock.now();
    let status: DeliveryStatus;
    let next: Date | null = null;
    if (forced) status = forced;
    else if (result.ok) status = 'succeeded';
    else if (delivery.max_attempts !== null && delivery.attempts >= delivery.max_attempts) status = 'failed';
    else {
      const at = nextAttemptAt({
        attempt: delivery.attempts,
        now,
        deadline: delivery.deadline_at,
        ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
        random: this.random,
        ...(this.options.retryPolicy ? { policy: this.options.retryPolicy } : {}),
      });
      if (at === 'dead_letter') status = 'dead_lettered';
      else {
        status = 'pending';
        next = at;
      }
    }
    this.pending.push({
      deliveryId: delivery.delivery_id,
      tenantId: delivery.tenant_id,
      attempt: delivery.attempts,
      startedAt: result.startedAt,
      latencyMs: result.latencyMs,
      responseStatus: result.responseStatus,
      error: result.error,
      responseExcerpt: result.responseExcerpt,
      status,
      nextAttemptAt: next,
    });
    if (this.pending.length >= FLUSH_AT) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  // One write at a time, in order; a failed write keeps its records for the next one.
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.pending;
      if (batch.length === 0) return;
      this.pending = [];
      try {
        await this.store.record(batch, this.options.clock.now());
      } catch (error) {
        this.pending = batch.concat(this.pending);
        this.options.onError?.(error);
        this.flushTimer ??= setTimeout(() => void this.flush(), 1000);
      }
    });
    return this.flushing;
  }
}
