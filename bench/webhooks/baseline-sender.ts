import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import { uuidv7 } from '../../platform/ids.ts';
import { buildEnvelope } from '../../services/webhooks/envelope.ts';
import { signatureHeader } from '../../clients/typescript/src/webhook-signing.ts';
import { ownCpuSeconds } from '../lib/proc-cpu.ts';
import { alertData } from './events.ts';
import { BASELINE_DELIVERIES, CHANNEL, IN_FLIGHT, TENANT } from './settings.ts';

// The baseline's sender: the best a sender could do, a plain https.request loop with no database.
// It runs in a child process, bench/webhooks.ts started again with ROLE_VARIABLE set (see
// runBaseline there for why a child); this file holds both ends of how the two talk: the
// environment the child is given and the result line it prints last.

const ROLE_VARIABLE = 'WEBHOOK_BENCH_ROLE';
const BASELINE_RESULT = 'BASELINE_RESULT';

// What the baseline child prints as its last line.
export interface BaselineReport {
  ok: number;
  failures: Record<string, number>;
  cpuSeconds: number;
}

export const isBaselineChild = (): boolean => process.env[ROLE_VARIABLE] === 'baseline';

// The child's environment: this one, plus where to send, the secret to sign with and the CA to trust.
export function baselineChildEnv(url: string, secret: string, caFile: string): NodeJS.ProcessEnv {
  return { ...process.env, [ROLE_VARIABLE]: 'baseline', WEBHOOK_BASELINE_URL: url, WEBHOOK_BASELINE_SECRET: secret, WEBHOOK_BASELINE_CA_FILE: caFile };
}

// The child's report, from its output; undefined when it printed none.
export function baselineReport(output: string): BaselineReport | undefined {
  const line = output.split('\n').find((l) => l.startsWith(`${BASELINE_RESULT} `));
  return line === undefined ? undefined : (JSON.parse(line.slice(BASELINE_RESULT.length + 1)) as BaselineReport);
}

// The child's side: BASELINE_DELIVERIES POSTs over IN_FLIGHT loops, each sending its next request
// as soon as the previous answer is read. Per request it does what any sender must: build the
// envelope and sign it (the product's builders: how fast, not whether right, is measured here).
export async function baselineSender(): Promise<void> {
  const required = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const url = new URL(required('WEBHOOK_BASELINE_URL'));
  const secret = required('WEBHOOK_BASELINE_SECRET');
  // The same trust as the worker's sender (the public roots and the receiver's CA), as one TLS
  // context built once and shared by every connection: given as `ca`, Node builds a context per
  // connection, which with the whole root list costs ~15 ms of CPU and ~1 MB that the socket keeps.
  const ca = [...rootCertificates, await readFile(required('WEBHOOK_BASELINE_CA_FILE'), 'utf8')];
  const agent = new https.Agent({ keepAlive: true, maxSockets: IN_FLIGHT, secureContext: createSecureContext({ ca }) });
  const failures: Record<string, number> = {};
  let next = 0;
  let ok = 0;
  const cpuBefore = ownCpuSeconds();
  const loop = async (): Promise<void> => {
    while (next < BASELINE_DELIVERIES) {
      const status = await post(agent, url, secret, next++).catch((error: Error) => error.message);
      if (status === 200) ok++;
      else failures[String(status)] = (failures[String(status)] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  const cpuSeconds = ownCpuSeconds() - cpuBefore;
  agent.destroy();
  const report: BaselineReport = { ok, failures, cpuSeconds };
  process.stdout.write(`${BASELINE_RESULT} ${JSON.stringify(report)}\n`);
}

function post(agent: https.Agent, url: URL, secret: string, index: number): Promise<number> {
  const now = new Date();
  const envelope = buildEnvelope(
    { tenantId: TENANT, envelopeId: uuidv7(now.getTime()), type: 'alert.opened', classification: 'restricted_aml', createdAt: now, data: alertData(index, now) },
    CHANNEL,
    { attempt: 1, deliveryId: uuidv7(now.getTime()) },
  );
  if (!envelope.ok) throw new Error(envelope.reason);
  const t = Math.floor(now.getTime() / 1000);
  const headers = {
    'svc-webhook-signature': signatureHeader(t, envelope.body, [secret]),
    'svc-webhook-timestamp': String(t),
    'svc-webhook-id': envelope.envelopeId,
    'content-type': 'application/json',
    'content-length': String(envelope.body.length),
  };
  return new Promise((resolve, reject) => {
    const request = https.request(url, { method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    // The worker's attempt timeout (SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS default).
    request.setTimeout(10_000, () => request.destroy(new Error('no answer within 10 s')));
    request.on('error', reject);
    request.end(envelope.body);
  });
}
