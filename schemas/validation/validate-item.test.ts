import { describe, expect, it } from 'vitest';
import { registryWith } from '../assets/registry.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { Family } from '../families/index.ts';
import { validateItem } from './validate-item.ts';
import {
  CTX, DATE_TIME, OUT_OF_RANGE, PAN, REMOVE, SCALE, SCHEMA, UNSUPPORTED_VERSION,
  chars, check, checkWith, one, type Mutation, eventOf, expectAccepted, expectRefused, itemOf, label, onData, onEvent,
} from './test-kit.ts';

const FAMILIES: Family[] = ['party', 'account', 'instrument', 'movement', 'relationship', 'control_event'];
const CARD = '4111111111111111';

describe('validateItem: valid fixtures', () => {
  it.each(FAMILIES)('accepts the %s fixture and returns it unchanged', (family) => {
    const item = itemOf(family);
    const result = validateItem(item, CTX);
    expectAccepted(result);
    if (result.ok) {
      expect(result.object).toBe(family);
      expect(result.event).toEqual(item.event);
    }
  });

  it('does not round or reshape money values on acceptance', () => {
    const result = check('movement', onData('amount', { value: '-123456789012345678901234567890', asset: 'USD', scale: 2 }));
    expectAccepted(result);
    if (result.ok) expect(result.event.data).toHaveProperty('amount.value', '-123456789012345678901234567890');
  });
});

describe('envelope external_id (1-256)', () => {
  it.each(FAMILIES)('is required (%s)', (family) => expectRefused(check(family, onEvent('external_id', REMOVE)), SCHEMA, 'event.external_id'));
  it.each(['x', chars(256)])('accepts %#', (value) => expectAccepted(check('party', onEvent('external_id', value))));
  it.each(['', chars(257), 123, null])('refuses %#', (value) => expectRefused(check('party', onEvent('external_id', value)), SCHEMA, 'event.external_id'));
  it('reports a missing member as such', () => {
    const result = check('party', onEvent('external_id', REMOVE));
    expect(result.ok ? undefined : result.errors[0]!.message).toBe('required member is missing');
  });
});

describe('envelope schema_version (literal 2026-09-01)', () => {
  it.each(FAMILIES)('accepts 2026-09-01 (%s)', (family) => expectAccepted(check(family, onEvent('schema_version', '2026-09-01'))));
  it.each(['2026-09-02', '2025-01-01', '2026-9-1', '', 'v1', 20260901, null])('refuses %j as unsupported', (value) =>
    expectRefused(check('party', onEvent('schema_version', value)), UNSUPPORTED_VERSION, 'event.schema_version'));
  it('refuses a missing schema_version as a schema error', () =>
    expectRefused(check('party', onEvent('schema_version', REMOVE)), SCHEMA, 'event.schema_version'));
});

describe('envelope occurred_at (date-time, required)', () => {
  it.each(FAMILIES)('is required (%s)', (family) => expectRefused(check(family, onEvent('occurred_at', REMOVE)), SCHEMA, 'event.occurred_at'));
  it.each(DATE_TIME.accept!)('accepts %j', (value) => expectAccepted(check('movement', onEvent('occurred_at', value))));
  it.each(DATE_TIME.refuse!)('refuses %j', (value) => expectRefused(check('movement', onEvent('occurred_at', value)), SCHEMA, 'event.occurred_at'));

  it('accepts exactly the tolerated future skew and refuses beyond it', () => {
    expectAccepted(check('movement', onEvent('occurred_at', '2026-09-01T12:05:00Z')));
    expectAccepted(check('movement', onEvent('occurred_at', '2026-09-01T14:05:00+02:00')));
    expectRefused(check('movement', onEvent('occurred_at', '2026-09-01T12:05:00.001Z')), OUT_OF_RANGE, 'event.occurred_at');
    expectRefused(check('movement', onEvent('occurred_at', '2026-09-01T08:05:01-04:00')), OUT_OF_RANGE, 'event.occurred_at');
    expectRefused(check('movement', onEvent('occurred_at', '2027-01-01T00:00:00Z')), OUT_OF_RANGE, 'event.occurred_at');
  });

  it('measures the skew against the context clock and tolerance', () => {
    const at = onEvent('occurred_at', '2026-09-01T12:10:00Z');
    expectRefused(check('party', at), OUT_OF_RANGE, 'event.occurred_at');
    expectAccepted(checkWith({ futureSkewMs: 600_000 }, 'party', at));
    expectAccepted(checkWith({ nowMs: Date.parse('2026-09-01T12:05:00Z') }, 'party', at));
  });

  it('accepts the epoch and refuses anything before 1970', () => {
    expectAccepted(check('party', onEvent('occurred_at', '1970-01-01T00:00:00Z')));
    expectAccepted(check('party', onEvent('occurred_at', '1969-12-31T20:00:00-04:00')));
    expectRefused(check('party', onEvent('occurred_at', '1969-12-31T23:59:59.999Z')), OUT_OF_RANGE, 'event.occurred_at');
    expectRefused(check('party', onEvent('occurred_at', '1970-01-01T00:30:00+01:00')), OUT_OF_RANGE, 'event.occurred_at');
    expectRefused(check('party', onEvent('occurred_at', '0001-01-01T00:00:00Z')), OUT_OF_RANGE, 'event.occurred_at');
  });

  it('does not apply the future skew to recorded_at or data timestamps', () => {
    expectAccepted(check('movement', onEvent('recorded_at', '2027-01-01T00:00:00Z')));
    expectAccepted(check('party', onData('created_at', '1960-01-01T00:00:00Z')));
  });
});

describe('envelope recorded_at (date-time, optional)', () => {
  it('is optional', () => expectAccepted(check('movement', onEvent('recorded_at', REMOVE))));
  it.each(DATE_TIME.accept!)('accepts %j', (value) => expectAccepted(check('party', onEvent('recorded_at', value))));
  it.each(DATE_TIME.refuse!)('refuses %j', (value) => expectRefused(check('party', onEvent('recorded_at', value)), SCHEMA, 'event.recorded_at'));
});

describe('envelope sequence (integer >= 0, optional)', () => {
  it.each(FAMILIES)('is optional (%s)', (family) => expectAccepted(check(family, onEvent('sequence', REMOVE))));
  it.each([0, 1, 42, Number.MAX_SAFE_INTEGER])('accepts %d', (value) => expectAccepted(check('party', onEvent('sequence', value))));
  it.each([-1, 1.5, '1', null, true])('refuses %j', (value) => expectRefused(check('party', onEvent('sequence', value)), SCHEMA, 'event.sequence'));
  // One finding each, not the integer check's and a bound's both saying "too big".
  it.each([Number.MAX_SAFE_INTEGER + 2, 2 ** 63])('refuses %d, past the safe integers, with one finding', (value) =>
    expectRefused(check('party', onEvent('sequence', value)), SCHEMA, 'event.sequence'));
});

describe('envelope sequence: version number for entity families, absent for facts', () => {
  it.each(['party', 'account', 'instrument', 'relationship'] as Family[])('accepts a sequence on the entity %s', (family) =>
    expectAccepted(check(family, onEvent('sequence', 7))));
  it.each(['movement', 'control_event'] as Family[])('refuses a sequence on the fact %s', (family) => {
    expectRefused(check(family, onEvent('sequence', 0)), SCHEMA, 'event.sequence');
    expectRefused(check(family, onEvent('sequence', 3)), SCHEMA, 'event.sequence');
  });
  it.each(['movement', 'control_event'] as Family[])('accepts the fact %s without a sequence', (family) =>
    expectAccepted(check(family, onEvent('sequence', REMOVE))));
});

describe('envelope data (object, required)', () => {
  it.each(FAMILIES)('is required (%s)', (family) => expectRefused(check(family, onEvent('data', REMOVE)), SCHEMA, 'event.data'));
  it.each(one(['x', 1, null, [], true]))('refuses %j', (value) => expectRefused(check('party', onEvent('data', value)), SCHEMA, 'event.data'));
  it.each(FAMILIES)('refuses an empty data object at its first required member (%s)', (family) => {
    const result = check(family, onEvent('data', {}));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe(SCHEMA);
      expect(result.errors.map((e) => e.path)).toContain('event.data.type');
      expect(result.errors.every((e) => e.code === SCHEMA && e.message === 'required member is missing')).toBe(true);
    }
  });
});

describe('unknown members are refused at every level', () => {
  it.each(FAMILIES)('in the envelope (%s)', (family) => expectRefused(check(family, onEvent('foo', 1)), SCHEMA, 'event.foo'));
  it.each(FAMILIES)('in data (%s)', (family) => expectRefused(check(family, onData('foo', 'bar')), SCHEMA, 'event.data.foo'));

  it('received_at is the service\'s and never sent', () => {
    const result = check('movement', onEvent('received_at', '2026-09-01T11:59:30Z'));
    expectRefused(result, SCHEMA, 'event.received_at');
    expect(result.ok ? '' : result.errors[0]!.message).toBe('unknown member');
  });

  it('reports each unknown member with its own path', () => {
    const result = check('party', onEvent('foo', 1), onEvent('bar', 2), onData('baz', 3));
    const errors = result.ok ? [] : result.errors;
    expect(errors).toHaveLength(3);
    expect(errors).toEqual(expect.arrayContaining([
      { path: 'event.foo', code: SCHEMA, message: 'unknown member' },
      { path: 'event.bar', code: SCHEMA, message: 'unknown member' },
      { path: 'event.data.baz', code: SCHEMA, message: 'unknown member' },
    ]));
  });

  it.each([
    ['party', 'identifiers.0.foo'],
    ['party', 'jurisdictions.foo'],
    ['party', 'addresses.0.foo'],
    ['party', 'expected_profile.foo'],
    ['party', 'expected_profile.declared_monthly_volume.foo'],
    ['party', 'kyc.foo'],
    ['party', 'screening_status_reported.foo'],
    ['movement', 'amount.foo'],
    ['movement', 'debit.foo'],
    ['movement', 'credit.foo'],
    ['movement', 'credit.counterparty.foo'],
    ['movement', 'links.foo'],
    ['movement', 'geo.foo'],
    ['movement', 'fees.0.foo'],
    ['relationship', 'from.foo'],
    ['relationship', 'to.foo'],
    ['control_event', 'subject.foo'],
    ['control_event', 'amount.foo'],
  ] as [Family, string][])('in nested %s data.%s', (family, path) =>
    expectRefused(check(family, onData(path, 'x')), SCHEMA, `event.data.${path}`));
});

describe('the item: {object, event}', () => {
  it.each(FAMILIES)('accepts object %s', (family) => expectAccepted(validateItem({ object: family, event: eventOf(family) }, CTX)));

  it.each(one([null, 'x', 1, [], true]))('refuses a non-object item %j at the root path', (raw) => {
    expectRefused(validateItem(raw, CTX), SCHEMA, '');
    expectRefused(validateItem(raw, CTX, ['events', '3']), SCHEMA, 'events.3');
  });

  it('refuses an unknown item member', () => {
    expectRefused(validateItem({ ...itemOf('party'), extra: 1 }, CTX), SCHEMA, 'extra');
  });

  it('requires object', () => expectRefused(validateItem({ event: eventOf('party') }, CTX), SCHEMA, 'object'));
  it.each(['widget', 'Party', 'parties', '', 1, null])('refuses object %j', (object) =>
    expectRefused(validateItem({ object, event: eventOf('party') }, CTX), SCHEMA, 'object'));

  it('requires event', () => expectRefused(validateItem({ object: 'party' }, CTX), SCHEMA, 'event'));
  it.each(one(['x', 1, null, [], true]))('refuses event %j', (event) =>
    expectRefused(validateItem({ object: 'party', event }, CTX), SCHEMA, 'event'));

  it('validates the event against the named family', () => {
    const result = validateItem({ object: 'account', event: eventOf('party') }, CTX);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe(SCHEMA);
      expect(result.errors).toContainEqual({ path: 'event.data.holder_party_id', code: SCHEMA, message: 'required member is missing' });
      expect(result.errors).toContainEqual({ path: 'event.data.legal_names', code: SCHEMA, message: 'unknown member' });
    }
  });

  it('names the family and external_id of a refused item', () => {
    const result = check('movement', onData('type', 'nope'));
    expect(result).toMatchObject({ ok: false, object: 'movement', externalId: 'mv-1' });
  });
});

describe('path prefix', () => {
  const prefix = ['events', '3'];
  const run = (family: Family, ...mutations: Mutation[]) => validateItem(itemOf(family, ...mutations), CTX, prefix);

  it('accepts a valid item under a prefix', () => expectAccepted(run('movement')));
  it('prefixes schema errors', () => expectRefused(run('movement', onData('memo', chars(1001))), SCHEMA, 'events.3.event.data.memo'));
  it('prefixes unknown members', () => expectRefused(run('movement', onData('geo.foo', 1)), SCHEMA, 'events.3.event.data.geo.foo'));
  it('prefixes array indices', () => expectRefused(run('movement', onData('fees.0.value', '1.5')), SCHEMA, 'events.3.event.data.fees.0.value'));
  it('prefixes unsupported_schema_version', () =>
    expectRefused(run('party', onEvent('schema_version', '2025-01-01')), UNSUPPORTED_VERSION, 'events.3.event.schema_version'));
  it('prefixes pan_detected', () => expectRefused(run('movement', onData('memo', `card ${CARD}`)), PAN, 'events.3.event.data.memo'));
  it('prefixes money_scale_mismatch', () =>
    expectRefused(run('movement', onData('amount.scale', 3)), SCALE, 'events.3.event.data.amount.scale'));
  it('prefixes timestamp_out_of_range', () =>
    expectRefused(run('movement', onEvent('occurred_at', '2030-01-01T00:00:00Z')), OUT_OF_RANGE, 'events.3.event.occurred_at'));
  it('prefixes item-level members', () => {
    expectRefused(validateItem({ ...itemOf('party'), extra: 1 }, CTX, prefix), SCHEMA, 'events.3.extra');
    expectRefused(validateItem({ event: eventOf('party') }, CTX, prefix), SCHEMA, 'events.3.object');
    expectRefused(validateItem({ object: 'party' }, CTX, prefix), SCHEMA, 'events.3.event');
  });
});

describe('code precedence', () => {
  // One mutation per code; every subset keeps each finding in errors[] and picks the first by precedence.
  const BREAKS: [ErrorCode, Mutation][] = [
    [UNSUPPORTED_VERSION, onEvent('schema_version', '2025-01-01')],
    [PAN, onData('memo', `card ${CARD}`)],
    [SCHEMA, onData('type', 'not_a_type')],
    [SCALE, onData('amount.scale', 3)],
    [OUT_OF_RANGE, onEvent('occurred_at', '2030-01-01T00:00:00Z')],
  ];
  // Every non-empty subset, its breaks in precedence order.
  const subsets = Array.from({ length: 2 ** BREAKS.length - 1 }, (_, mask) => BREAKS.filter((_, i) => ((mask + 1) >> i) & 1));

  it.each(subsets.map((breaks) => [breaks.map(([code]) => code.split('/')[1]).join(' + '), breaks] as const))('%s', (_name, breaks) => {
    const result = check('movement', ...breaks.map(([, mutate]) => mutate));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe(breaks[0]![0]);
    expect(new Set(result.errors.map((e) => e.code))).toEqual(new Set(breaks.map(([code]) => code)));
  });

  it('an unsupported version does not also report schema_version as a schema error', () => {
    const result = check('party', onEvent('schema_version', 'x'), onData('type', 'nope'));
    expect(result.ok ? [] : result.errors.map((e) => [e.code, e.path])).toEqual([
      [UNSUPPORTED_VERSION, 'event.schema_version'],
      [SCHEMA, 'event.data.type'],
    ]);
  });

  it('registry checks need the tenant registry', () => {
    const asset = onData('amount', { value: '100', asset: 'X-USDC', scale: 6 });
    expectRefused(check('movement', asset), SCALE, 'event.data.amount.asset');
    expectAccepted(checkWith({ registry: registryWith(new Map([['X-USDC', 6]])) }, 'movement', asset));
  });
});

// Test-name helper is used by the family files; make sure the labels stay short and distinct.
describe('test helper labels', () => {
  it('abbreviates long values', () => {
    expect(label(chars(257))).toBe('"xxxxxx…" (257 chars)');
    expect(label(Array(21).fill('x'))).toBe('[21 items]');
    expect(label(REMOVE)).toBe('(absent)');
  });
});
