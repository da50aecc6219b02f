import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registryWith } from '../../assets/registry.ts';
import { ENVELOPES } from '../../envelope.ts';
import { FAMILIES, FAMILY_NAMES, type Family } from '../../families/index.ts';
import { moneySchema } from '../../primitives/money.ts';
import { validateItem, type ValidationContext } from '../../validation/validate-item.ts';
import { VALID_EVENTS } from '../../../test/fixtures/events.ts';
import { canonicalChangeTopic } from '../canonical-change.ts';
import { CHANGE_SCHEMAS_MATCH_INTERFACES, controlEventChangeSchema, entityChangeSchema, movementChangeSchema } from './change-records.ts';
import { AvroMappingError, deriveAvro } from './derive.ts';
import { BUS_TOPICS, topicValueSchema } from './index.ts';
import { coverageSummary, expectedCoverage, ValueGenerator, type GeneratorOptions } from './valid-values.ts';

const CTX: ValidationContext = {
  registry: registryWith(new Map([['X-USDC1', 6]])),
  nowMs: Date.parse('2026-09-01T12:00:00Z'),
  futureSkewMs: 300_000,
};

// Rules beyond the zod schema that validateItem applies: money scales from the asset registry,
// occurred_at between 1970 and now plus the skew.
const API_RULES: GeneratorOptions = {
  bySchema: new Map<z.ZodType, unknown[]>([
    [
      moneySchema,
      [
        { value: '12550', asset: 'USD', scale: 2 },
        { value: '-1', asset: 'JPY', scale: 0 },
        { value: '99999999999999999999999999999999999999', asset: 'X-USDC1', scale: 6 },
        { value: '0', asset: 'BHD', scale: 3 },
      ],
    ],
  ]),
  byPath: {
    occurred_at: ['2026-09-01T11:59:00Z', '1970-01-01T00:00:00Z', '2026-09-01T13:59:00.999999+02:00', '2016-12-31T23:59:60Z'],
  },
};

const SAMPLES = 96;

function generatedEvents(family: Family): { values: unknown[]; generator: ValueGenerator } {
  const generator = new ValueGenerator(API_RULES);
  const values = Array.from({ length: SAMPLES }, () => {
    const event = generator.value(ENVELOPES[family]) as Record<string, unknown>;
    // Facts carry no sequence (validateItem refuses one).
    if (FAMILIES[family].kind === 'fact') delete event.sequence;
    return event;
  });
  return { values, generator };
}

function roundTrip(topic: string, value: unknown): unknown {
  const derived = topicValueSchema(topic);
  return derived.decode(derived.encode(value));
}

describe('the inbox topics carry every valid API payload losslessly', () => {
  it.each(FAMILY_NAMES)('the %s fixture', (family) => {
    const event = VALID_EVENTS[family]();
    expect(validateItem({ object: family, event }, CTX).ok).toBe(true);
    expect(roundTrip(`inbox.${family}`, event)).toStrictEqual(event);
    // As the JSON a consumer is handed.
    expect(JSON.parse(JSON.stringify(roundTrip(`inbox.${family}`, event)))).toStrictEqual(JSON.parse(JSON.stringify(event)));
  });

  it.each(FAMILY_NAMES)('%s: generated payloads reaching every optional member and enum value', (family) => {
    const { values, generator } = generatedEvents(family);
    for (const event of values) {
      const validation = validateItem({ object: family, event }, CTX);
      expect(validation.ok ? [] : validation.errors).toEqual([]);
      expect(roundTrip(`inbox.${family}`, event)).toStrictEqual(event);
    }
    const expected = expectedCoverage(ENVELOPES[family], API_RULES);
    if (FAMILIES[family].kind === 'fact') expected.optionals.delete('sequence');
    const reached = generator.coverage;
    reached.optionals.delete(FAMILIES[family].kind === 'fact' ? 'sequence' : '');
    expect(coverageSummary(reached)).toEqual(coverageSummary(expected));
  });

  it('keeps -0, the largest safe integer and astral characters exactly', () => {
    const event = {
      ...VALID_EVENTS.movement(),
      data: { ...VALID_EVENTS.movement().data, geo: { lat: -0, lon: 5e-324 }, memo: '😀\u202e' },
    };
    const back = roundTrip('inbox.movement', event) as typeof event;
    expect(Object.is(back.data.geo.lat, -0)).toBe(true);
    expect(back).toStrictEqual(event);
    const party = { ...VALID_EVENTS.party(), sequence: Number.MAX_SAFE_INTEGER };
    expect(roundTrip('inbox.party', party)).toStrictEqual(party);
  });

  it('reads an integer member sent as -0 back as 0, the same integer (Avro integers have no -0)', () => {
    const party = { ...VALID_EVENTS.party(), sequence: -0 };
    expect(validateItem({ object: 'party', event: party }, CTX).ok).toBe(true);
    expect(Object.is((roundTrip('inbox.party', party) as { sequence: number }).sequence, 0)).toBe(true);
  });
});

describe('the canonical topics carry every change record losslessly', () => {
  const schemas = { party: entityChangeSchema, account: entityChangeSchema, instrument: entityChangeSchema, relationship: entityChangeSchema, movement: movementChangeSchema, control_event: controlEventChangeSchema };

  it('the zod schemas are the interfaces of schemas/bus/canonical-change.ts (checked by the type check)', () => {
    expect(CHANGE_SCHEMAS_MATCH_INTERFACES).toBe(true);
  });

  it.each(FAMILY_NAMES)('%s: generated change records, every nullable member null and not, data blobs as JSON', (family) => {
    const generator = new ValueGenerator();
    for (let i = 0; i < SAMPLES; i++) {
      const change = generator.value(schemas[family]);
      expect(schemas[family].safeParse(change).success).toBe(true);
      expect(roundTrip(canonicalChangeTopic(family), change)).toStrictEqual(change);
    }
    expect(coverageSummary(generator.coverage)).toEqual(coverageSummary(expectedCoverage(schemas[family])));
  });

  it('a change record as the canonical pipeline writes it', () => {
    const change = {
      tenant_id: 'acme',
      event_id: '0f3c0b1e-8a8e-4c53-9d7a-2f7d1c6b9e11',
      external_id: 'mv-1',
      occurred_at: '2026-09-01T11:59:00Z',
      received_at: '2026-09-01T12:00:00.000Z',
      historical: true,
      object: 'movement',
      type: 'p2p',
      status: 'completed',
      amount: { value: '12550', asset: 'USD', scale: 2 },
      base_amount: null,
      debit: { account_id: 'h:3f9a', party_id: null, country: 'US' },
      credit: { account_id: null, party_id: 'h:77aa', country: null },
      data: { memo: 'dinner', geo: { lat: 40.7, lon: -74 }, fees: [{ value: '25', asset: 'USD', scale: 2 }] },
    };
    expect(roundTrip('canonical.movement', change)).toStrictEqual(change);
  });
});

describe('derivation', () => {
  it('derives a schema for every bus topic, the same every time', () => {
    for (const topic of BUS_TOPICS) {
      const derived = topicValueSchema(topic);
      expect(derived.fullName).toMatch(/^svc\.(inbox|canonical)\.[a-z_]+\.[A-Za-z]+$/);
      const again = deriveAvro(topic.startsWith('inbox.') ? ENVELOPES[topic.slice(6) as Family] : { 'canonical.movement': movementChangeSchema, 'canonical.control_event': controlEventChangeSchema }[topic] ?? entityChangeSchema, {
        name: derived.fullName.split('.').pop()!,
        namespace: derived.fullName.split('.').slice(0, -1).join('.'),
      });
      expect({ ...again.schema, doc: undefined }).toEqual({ ...derived.schema, doc: undefined });
    }
    expect(() => topicValueSchema('inbox.nothing')).toThrow(/no Avro schema/);
  });

  it('maps optional members to null unions with a default, integers by their bounds, enums to strings', () => {
    const derived = deriveAvro(
      z.strictObject({ a: z.string().optional(), b: z.number().int().min(0).max(18), c: z.number().int(), d: z.number(), e: z.enum(['x', 'y.z']), f: z.string().nullable(), g: z.unknown() }),
      { name: 'T', namespace: 'svc.test' },
    );
    expect(derived.schema.fields).toEqual([
      { name: 'a', type: ['null', 'string'], default: null },
      { name: 'b', type: 'int' },
      { name: 'c', type: 'long' },
      { name: 'd', type: 'double' },
      { name: 'e', type: { type: 'string', 'svc.enum': ['x', 'y.z'] } },
      { name: 'f', type: ['null', 'string'], default: null },
      { name: 'g', type: { type: 'string', 'svc.json': true } },
    ]);
  });

  it('refuses what it could not carry exactly', () => {
    expect(() => deriveAvro(z.strictObject({ a: z.string().nullable().optional() }), { name: 'T', namespace: 'svc.test' })).toThrow(/optional and nullable/);
    const party = topicValueSchema('inbox.party');
    // A lone surrogate (valid JSON as "\ud800", accepted by the API today) has no UTF-8 form.
    expect(() => party.encode({ ...VALID_EVENTS.party(), external_id: 'p\ud800' })).toThrow(AvroMappingError);
    expect(() => party.encode({ ...VALID_EVENTS.party(), extra: 1 })).toThrow(/not a member/);
    expect(() => party.encode({ ...VALID_EVENTS.party(), recorded_at: null })).toThrow(/not nullable/);
    expect(() => party.encode({ ...VALID_EVENTS.party(), sequence: 2 ** 53 })).toThrow(/safe integer/);
  });
});
