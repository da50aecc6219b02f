// An independent reading of the spec's webhook rules, for tests and the benchmark: written from the
// rules alone and importing nothing from the product, so a product bug cannot be mirrored here and
// pass its own check. It reports every problem it finds, not just the first, so a failing test says
// everything that is wrong with a delivery at once.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type Channel = 'compliance' | 'operational';
type Classification = 'restricted_aml' | 'advisory' | 'operational';

export interface Verification {
  // True only when there are no problems: signature, headers, envelope and channel all conform.
  verified: boolean;
  problems: string[];
}

export interface VerifyInput {
  // The bytes exactly as received; the signature covers these, never re-serialised JSON.
  body: Buffer;
  // Header names in any case; a header given as an array with more than one value was repeated.
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  // The secrets the receiver holds for the endpoint (during rotation, possibly more than one).
  secrets: readonly string[];
  // The endpoint's channel; undefined means the test did not say, which is itself a problem.
  channel: Channel | undefined;
  // The receiver's clock, ms since the epoch.
  now: number;
}

const TOLERANCE_SECONDS = 300;

const BOTH: readonly Channel[] = ['compliance', 'operational'];
const COMPLIANCE: readonly Channel[] = ['compliance'];
const OPERATIONAL: readonly Channel[] = ['operational'];

// The spec's event catalog: each type's classification and the channels it may be delivered on.
const EVENT_CATALOG: Readonly<Record<string, { classification: Classification; channels: readonly Channel[] }>> = {
  'alert.opened': { classification: 'restricted_aml', channels: COMPLIANCE },
  'episode.updated': { classification: 'restricted_aml', channels: COMPLIANCE },
  'episode.escalated': { classification: 'restricted_aml', channels: COMPLIANCE },
  'episode.resolved': { classification: 'restricted_aml', channels: COMPLIANCE },
  'episode.reopened': { classification: 'restricted_aml', channels: COMPLIANCE },
  'case.status_changed': { classification: 'restricted_aml', channels: COMPLIANCE },
  'case.disposed': { classification: 'restricted_aml', channels: COMPLIANCE },
  'risk_state.changed': { classification: 'restricted_aml', channels: COMPLIANCE },
  'recommendation.issued': { classification: 'advisory', channels: OPERATIONAL },
  'coverage.degraded': { classification: 'operational', channels: BOTH },
  'coverage.recovered': { classification: 'operational', channels: BOTH },
  'import.progress': { classification: 'operational', channels: OPERATIONAL },
  'import.completed': { classification: 'operational', channels: OPERATIONAL },
  'import.failed': { classification: 'operational', channels: OPERATIONAL },
  'ruleset.candidate_ready': { classification: 'operational', channels: COMPLIANCE },
  'ruleset.activated': { classification: 'operational', channels: COMPLIANCE },
  'ruleset.rolled_back': { classification: 'operational', channels: COMPLIANCE },
  'conformance.drift_detected': { classification: 'operational', channels: OPERATIONAL },
  'webhook.test': { classification: 'operational', channels: BOTH },
};

const ENVELOPE_MEMBERS = ['id', 'type', 'classification', 'created_at', 'tenant_id', 'data', 'delivery'];
const DELIVERY_MEMBERS = ['attempt', 'delivery_id'];

export function verifyWebhookDelivery(input: VerifyInput): Verification {
  const problems: string[] = [];
  const headers = lowerCased(input.headers);
  const header = (name: string): string | undefined => single(headers, name, problems);

  const signature = header('svc-webhook-signature');
  const timestamp = header('svc-webhook-timestamp');
  const webhookId = header('svc-webhook-id');
  checkContentType(header('content-type'), problems);

  const parsed = signature === undefined ? undefined : parseSignatureHeader(signature, problems);
  if (parsed?.t !== undefined) {
    if (timestamp !== parsed.t) problems.push(`Svc-Webhook-Timestamp ${show(timestamp)} differs from the signature's t=${parsed.t}`);
    const age = Math.floor(input.now / 1000) - Number(parsed.t);
    if (Math.abs(age) > TOLERANCE_SECONDS) problems.push(`t=${parsed.t} is ${age} s from the receiver's clock (tolerance ${TOLERANCE_SECONDS} s)`);
    if (parsed.v1.length > 0) checkSignature(parsed.t, parsed.v1, input.body, input.secrets, problems);
  }

  const envelope = checkEnvelope(input.body, input.channel, problems);
  if (envelope?.id !== undefined && webhookId !== envelope.id) {
    problems.push(`Svc-Webhook-Id ${show(webhookId)} differs from the envelope id ${JSON.stringify(envelope.id)}`);
  }
  return { verified: problems.length === 0, problems };
}

// --- headers -------------------------------------------------------------------------------------

function lowerCased(headers: VerifyInput['headers']): Map<string, readonly string[]> {
  const out = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    out.set(key, [...(out.get(key) ?? []), ...(typeof value === 'string' ? [value] : value)]);
  }
  return out;
}

// A repeated header is a problem: which copy a receiver reads is up to its HTTP stack.
function single(headers: Map<string, readonly string[]>, name: string, problems: string[]): string | undefined {
  const values = headers.get(name);
  if (values === undefined || values.length === 0) {
    problems.push(`missing header ${name}`);
    return undefined;
  }
  if (values.length > 1) problems.push(`header ${name} appears ${values.length} times`);
  return values[0];
}

function checkContentType(value: string | undefined, problems: string[]): void {
  if (value === undefined) return;
  const [mediaType = '', ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') problems.push(`content-type ${JSON.stringify(value)} is not application/json`);
  // JSON exchanged between systems is UTF-8 (RFC 8259); a charset saying otherwise contradicts the body.
  for (const parameter of parameters) {
    if (parameter.startsWith('charset=') && parameter.replace(/^charset="?|"?$/g, '') !== 'utf-8') {
      problems.push(`content-type charset ${JSON.stringify(parameter)} is not utf-8`);
    }
  }
}

const T_PATTERN = /^\d{1,12}$/;
const V1_PATTERN = /^[0-9a-f]{64}$/;

// Grammar: t=<1-12 digits>,v1=<64 lower-case hex>[,v1=...], no spaces, t first. Anything else is
// reported; a header without a usable t or without any v1 is malformed and cannot verify.
function parseSignatureHeader(value: string, problems: string[]): { t?: string; v1: string[] } {
  let t: string | undefined;
  let sawT = false;
  const v1: string[] = [];
  let sawV1 = false;
  value.split(',').forEach((element, index) => {
    const eq = element.indexOf('=');
    const key = eq < 0 ? element : element.slice(0, eq);
    const item = eq < 0 ? undefined : element.slice(eq + 1);
    if (key === 't') {
      if (index !== 0) problems.push('malformed signature header: t is not the first element');
      if (sawT) problems.push('malformed signature header: more than one t');
      else if (item === undefined || !T_PATTERN.test(item)) problems.push(`malformed signature header: t=${show(item)} is not 1-12 digits`);
      else t = item;
      sawT = true;
    } else if (key === 'v1') {
      if (item === undefined || !V1_PATTERN.test(item)) problems.push(`malformed signature header: v1=${show(item)} is not 64 lower-case hex digits`);
      else v1.push(item);
      sawV1 = true;
    } else {
      problems.push(`malformed signature header: unexpected element ${JSON.stringify(element)}`);
    }
  });
  if (!sawT) problems.push('malformed signature header: no t');
  if (!sawV1) problems.push('malformed signature header: no v1');
  // A t that is present but unusable was reported above; the caller checks nothing against it.
  return t === undefined ? { v1 } : { t, v1 };
}

// Signed payload: ASCII t, '.', then the raw body bytes; HMAC-SHA256 keyed with the whole secret's
// UTF-8 bytes (prefix included). Every pair is compared, in constant time, with no early exit.
function checkSignature(t: string, v1: readonly string[], body: Buffer, secrets: readonly string[], problems: string[]): void {
  if (secrets.length === 0) {
    problems.push('no secrets held for this path, so the signature cannot be checked');
    return;
  }
  const payload = Buffer.concat([Buffer.from(`${t}.`, 'ascii'), body]);
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(payload).digest();
    for (const candidate of v1) {
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
    }
  }
  if (!matched) problems.push(`no v1 signature matches any of the ${secrets.length} held secret(s)`);
}

// --- envelope ------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasPrefix = (value: unknown, prefix: string): boolean => typeof value === 'string' && value.length > prefix.length && value.startsWith(prefix);

function checkEnvelope(body: Buffer, channel: Channel | undefined, problems: string[]): { id?: string } | undefined {
  let envelope: unknown;
  try {
    // fatal: invalid UTF-8 is an error, not U+FFFD; ignoreBOM keeps a BOM so JSON.parse rejects it.
    envelope = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body));
  } catch (error) {
    problems.push(`body is not UTF-8 JSON: ${(error as Error).message}`);
    return undefined;
  }
  if (!isObject(envelope)) {
    problems.push('envelope is not a JSON object');
    return undefined;
  }
  exactMembers('envelope', envelope, ENVELOPE_MEMBERS, problems);

  if (!hasPrefix(envelope.id, 'whe_')) problems.push(`envelope id ${show(envelope.id)} is not a string with prefix whe_`);
  if (!isDateTime(envelope.created_at)) problems.push(`created_at ${show(envelope.created_at)} is not an RFC 3339 date-time`);
  if (typeof envelope.tenant_id !== 'string' || envelope.tenant_id === '') problems.push(`tenant_id ${show(envelope.tenant_id)} is not a non-empty string`);
  if (!isObject(envelope.data)) problems.push('data is not an object');
  checkDeliveryMember(envelope.delivery, problems);

  const type = envelope.type;
  const entry = typeof type === 'string' && Object.hasOwn(EVENT_CATALOG, type) ? EVENT_CATALOG[type] : undefined;
  if (entry === undefined) {
    problems.push(`type ${show(type)} is not in the event catalog`);
  } else {
    if (envelope.classification !== entry.classification) {
      problems.push(`classification ${show(envelope.classification)} disagrees with the catalog's ${entry.classification} for ${String(type)}`);
    }
    if (channel === undefined) problems.push('no channel registered for this path, so deliverability cannot be checked');
    else if (!entry.channels.includes(channel)) problems.push(`${String(type)} is not deliverable on the ${channel} channel`);
    if (type === 'webhook.test' && isObject(envelope.data)) checkTestEventData(envelope.data, channel, problems);
  }
  return typeof envelope.id === 'string' ? { id: envelope.id } : {};
}

function exactMembers(what: string, value: Json, expected: readonly string[], problems: string[]): void {
  for (const name of expected) if (!Object.hasOwn(value, name)) problems.push(`${what} lacks member ${name}`);
  for (const name of Object.keys(value)) if (!expected.includes(name)) problems.push(`${what} has unexpected member ${name}`);
}

function checkDeliveryMember(delivery: unknown, problems: string[]): void {
  if (!isObject(delivery)) {
    problems.push('delivery is not an object');
    return;
  }
  exactMembers('delivery', delivery, DELIVERY_MEMBERS, problems);
  const attempt = delivery.attempt;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) problems.push(`delivery.attempt ${show(attempt)} is not an integer >= 1`);
  if (!hasPrefix(delivery.delivery_id, 'whd_')) problems.push(`delivery.delivery_id ${show(delivery.delivery_id)} is not a string with prefix whd_`);
}

function checkTestEventData(data: Json, channel: Channel | undefined, problems: string[]): void {
  if (!hasPrefix(data.endpoint_id, 'whk_')) problems.push(`data.endpoint_id ${show(data.endpoint_id)} is not a string with prefix whk_`);
  if (data.channel !== 'compliance' && data.channel !== 'operational') problems.push(`data.channel ${show(data.channel)} is not compliance or operational`);
  // The test event names the endpoint's own channel; a different one means it went to the wrong place.
  else if (channel !== undefined && data.channel !== channel) problems.push(`data.channel ${data.channel} differs from the endpoint's channel ${channel}`);
  if (typeof data.message !== 'string') problems.push(`data.message ${show(data.message)} is not a string`);
  if (!isDateTime(data.sent_at)) problems.push(`data.sent_at ${show(data.sent_at)} is not an RFC 3339 date-time`);
}

// RFC 3339 section 5.6 date-time, with calendar ranges checked (a regular expression alone accepts
// February 30th). Seconds may be 60 for a leap second.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

export function isDateTime(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const match = DATE_TIME.exec(value);
  if (match === null) return false;
  const part = (index: number): number => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = [1, 2, 3, 4, 5, 6, 7, 8].map(part) as [number, number, number, number, number, number, number, number];
  // Computed rather than asked of Date, which maps years 0-99 to 1900-1999.
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 60 && offsetHour <= 23 && offsetMinute <= 59;
}

function show(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
