import { describe, expect, it } from 'vitest';
import { FAMILIES, FAMILY_NAMES, moneyFields, type Family } from '../../../schemas/families/index.ts';
import type { FieldError } from '../../../schemas/problem.ts';
import { NO_SEQUENCE_WARNING, compileMapping, familyTargets } from './compile.ts';
import { resolveTimeZone } from './datetime.ts';
import { classifyTarget, editDistance, moneyTargets, nearest } from './targets.ts';

// The mapping compiler, rule by rule, with the exact path of each finding.

type Rules = Record<string, unknown>;
const USD = { value: { from: 'amount' }, asset: { const: 'USD' } };
const ENVELOPE: Rules = { external_id: { from: 'id' }, occurred_at: { from: 'ts', type: 'datetime' } };

// Required data fields of each family, mapped from columns named after the leaf.
const MINIMAL: Record<Family, Rules> = {
  party: { 'data.type': { const: 'person' }, 'data.status': { from: 'status' }, 'data.created_at': { from: 'created', type: 'datetime' } },
  account: {
    'data.type': { from: 'type' }, 'data.holder_party_id': { from: 'holder' }, 'data.asset': { const: 'USD' },
    'data.status': { from: 'status' }, 'data.opened_at': { from: 'opened', type: 'datetime' },
  },
  instrument: { 'data.type': { from: 'type' }, 'data.status': { from: 'status' }, 'data.first_seen_at': { from: 'seen', type: 'datetime' } },
  movement: {
    'data.type': { from: 'type' }, 'data.status': { const: 'completed' }, 'data.amount': { type: 'money', ...USD },
    'data.debit.account_id': { from: 'from_acct' }, 'data.credit.account_id': { from: 'to_acct' },
  },
  relationship: {
    'data.type': { from: 'type' }, 'data.from.kind': { const: 'party' }, 'data.from.external_id': { from: 'a' },
    'data.to.kind': { const: 'party' }, 'data.to.external_id': { from: 'b' }, 'data.valid_from': { from: 'since', type: 'datetime' },
  },
  control_event: { 'data.type': { from: 'type' }, 'data.subject.kind': { const: 'account' }, 'data.subject.external_id': { from: 'acct' } },
};

const SEQUENCE: Rules = { sequence: { from: 'version', type: 'integer' } };

function doc(family: Family, fields: Rules, format: Rules = { kind: 'csv' }, extra: Rules = {}) {
  const sequence = FAMILIES[family].kind === 'entity' ? SEQUENCE : {};
  return { mapping_version: 1, family, format, fields: { ...ENVELOPE, ...sequence, ...MINIMAL[family], ...fields }, ...extra };
}

function errorsOf(raw: unknown): FieldError[] {
  const outcome = compileMapping(raw);
  if (outcome.ok) throw new Error('expected the mapping to be refused');
  for (const e of outcome.errors) expect(e.code).toBe('svc:validation/schema');
  return outcome.errors;
}

// The one finding at `path`, whose message contains `message`.
function expectFinding(raw: unknown, path: string, message: string | RegExp): void {
  const at = errorsOf(raw).filter((e) => e.path === path);
  expect(at, `findings at ${path}`).toHaveLength(1);
  expect(at[0]!.message).toMatch(message);
}

function expectOk(raw: unknown) {
  const outcome = compileMapping(raw);
  if (!outcome.ok) throw new Error(`refused: ${JSON.stringify(outcome.errors)}`);
  return outcome.mapping;
}

describe('minimal mappings', () => {
  for (const family of FAMILY_NAMES) {
    it(`${family}: CSV and JSONL compile without warnings`, () => {
      expect(expectOk(doc(family, {})).warnings).toEqual([]);
      expect(expectOk(doc(family, {}, { kind: 'jsonl' })).warnings).toEqual([]);
    });
  }

  it('fills dialect defaults and keeps targets in document order', () => {
    const mapping = expectOk(doc('movement', { 'data.memo': { from: 'memo', optional: true } }));
    expect(mapping.family).toBe('movement');
    expect(mapping.csv).toEqual({ delimiter: ',', quote: '"', hasHeader: true, headerPerChunk: false, skipLeadingRows: 0, nullValues: [] });
    expect(mapping.jsonl).toBeUndefined();
    expect(mapping.targets.map((t) => t.target)).toEqual([
      'external_id', 'occurred_at', 'data.type', 'data.status', 'data.amount', 'data.debit.account_id', 'data.credit.account_id', 'data.memo',
    ]);
    expect(mapping.targets[5]).toEqual({ target: 'data.debit.account_id', path: ['data', 'debit', 'account_id'], rule: { from: 'from_acct' }, type: 'string' });
    expect(mapping.targets[4]!.type).toBe('money');
  });

  it('passes given dialect keys through', () => {
    const csv = { kind: 'csv', delimiter: ';', quote: "'", has_header: false, columns: ['id', 'ts'], skip_leading_rows: 2, comment_prefix: '#', null_values: ['NULL'] };
    const mapping = expectOk({ mapping_version: 1, family: 'movement', format: csv, fields: ENVELOPE });
    expect(mapping.csv).toEqual({ delimiter: ';', quote: "'", hasHeader: false, headerPerChunk: false, columns: ['id', 'ts'], skipLeadingRows: 2, commentPrefix: '#', nullValues: ['NULL'] });
    const jsonl = expectOk({ mapping_version: 1, family: 'movement', format: { kind: 'jsonl', comment_prefix: '//', skip_leading_rows: 1 }, fields: ENVELOPE });
    expect(jsonl.jsonl).toEqual({ skipLeadingRows: 1, commentPrefix: '//', nullValues: [] });
    expect(jsonl.csv).toBeUndefined();
  });
});

describe('rule 1: the zod schema', () => {
  it('reports schema findings with dotted paths', () => {
    expectFinding(doc('movement', { 'data.memo': { from: 'm', colour: 'red' } }), 'fields.data.memo.colour', 'unknown member');
    expectFinding({ ...doc('movement', {}), mapping_version: 2 }, 'mapping_version', /1/);
    expectFinding({ ...doc('movement', {}), family: 'payment' }, 'family', /./);
    expectFinding(doc('movement', { 'data.amount': { type: 'money', ...USD, scale: 19 } }), 'fields.data.amount.scale', /./);
    expectFinding(doc('movement', {}, { kind: 'csv', delimiter: ';;' }), 'format.delimiter', /./);
    expect(errorsOf('not a document')).toHaveLength(1);
  });

  it('still checks the well-formed rest of a document the schema refuses', () => {
    const errors = errorsOf(doc('movement', { 'data.memo': { from: 'm', colour: 'red' }, 'data.amout': { from: 'a' } }));
    expect(errors.map((e) => e.path).sort()).toEqual(['fields.data.amout', 'fields.data.memo.colour']);
  });
});

describe('rule 2: target paths', () => {
  it('familyTargets lists the envelope, leaves, money objects and their parts, collections; not objects', () => {
    const targets = familyTargets('movement');
    expect(targets.slice(0, 5)).toEqual(['external_id', 'occurred_at', 'recorded_at', 'sequence', 'schema_version']);
    expect(targets).toEqual(expect.arrayContaining(['data.debit.account_id', 'data.debit.counterparty.country', 'data.amount', 'data.amount.value', 'data.fees', 'data.geo.lat']));
    expect(targets).not.toContain('data.debit');
    expect(targets).not.toContain('data');
    expect(familyTargets('party')).toEqual(expect.arrayContaining(['data.identifiers', 'data.expected_profile.declared_monthly_volume', 'data.screening_status_reported.pep']));
  });

  it('the collections are exactly those the spec names', () => {
    const collections = FAMILY_NAMES.flatMap((f) => familyTargets(f).filter((t) => classifyTarget(f, t) === 'collection'));
    expect(collections.sort()).toEqual(['data.addresses', 'data.expected_profile.corridors', 'data.fees', 'data.identifiers', 'data.legal_names']);
  });

  it('money targets agree with moneyFields', () => {
    const money = { value: '1', asset: 'USD', scale: 2 };
    for (const family of FAMILY_NAMES) {
      // Data with a Money value at every money target the walk found (two items per money collection).
      const data: Record<string, unknown> = {};
      const collected = moneyTargets(family).filter((t) => t.endsWith('.<i>'));
      for (const target of moneyTargets(family)) {
        const keys = target.replace(/\.<i>$/, '').split('.').slice(1);
        const last = keys.pop()!;
        let at = data;
        for (const key of keys) at = (at[key] ??= {}) as Record<string, unknown>;
        at[last] = collected.includes(target) ? [money, money] : money;
      }
      const found = moneyFields(family, data).map(({ path }) => ['data', ...path].join('.'));
      for (const path of found) expect(classifyTarget(family, path), `${family} ${path}`).toBe('money');
      expect(found).toHaveLength(moneyTargets(family).length + collected.length);
    }
  });

  it('refuses an unknown path with the nearest real fields', () => {
    expectFinding(doc('movement', { 'data.amout': { from: 'a' } }), 'fields.data.amout', /^not a field of movement; nearest: data\.amount, /);
    const message = errorsOf(doc('movement', { 'data.debit.acount_id': { from: 'a' } })).find((e) => e.path === 'fields.data.debit.acount_id')!.message;
    expect(message).toMatch(/nearest: data\.debit\.account_id, /);
    expect(message.split('nearest: ')[1]!.split(', ')).toHaveLength(5);
    expectFinding(doc('party', { 'data.screening_status_reported.pepp': { from: 'p' } }), 'fields.data.screening_status_reported.pepp', /nearest: data\.screening_status_reported\.pep,/);
    expectFinding(doc('movement', { externalid: { from: 'x' } }), 'fields.externalid', /nearest: external_id,/);
    // Target names are the customer's keys: names of Object.prototype members are just unknown.
    for (const target of ['constructor', 'toString', 'data.constructor', 'data.debit.constructor']) {
      expectFinding(doc('movement', { [target]: { from: 'x' } }), `fields.${target}`, /^not a field of movement; nearest: /);
    }
    const proto = JSON.parse(JSON.stringify(doc('movement', {})).replace('"fields":{', '"fields":{"__proto__":{"from":"x"},'));
    expectFinding(proto, 'fields.__proto__', /^not a field of movement; nearest: /);
    // A field of another family is not a field of this one.
    expectFinding(doc('movement', { 'data.created_at': { from: 'c', type: 'datetime' } }), 'fields.data.created_at', /not a field of movement/);
  });

  it('refuses an intermediate object, naming its fields', () => {
    expectFinding(doc('movement', { 'data.debit': { from: 'd' } }), 'fields.data.debit', /^an object of movement, not a field; map its fields \(or map it whole with type json\): data\.debit\.account_id,/);
    expectFinding(doc('movement', { data: { from: 'd', type: 'json' } }), 'fields.data', /^an object of movement, not a field; map its fields: /);
    expectFinding(doc('movement', { 'data.geo': { from: 'g' } }), 'fields.data.geo', 'an object of movement, not a field; map its fields (or map it whole with type json): data.geo.country, data.geo.region, data.geo.lat, data.geo.lon');
  });

  it('takes an object of data whole with type json (the spec allows json for every target)', () => {
    const whole = (family: Family, fields: Rules) => ({ mapping_version: 1, family, format: { kind: 'jsonl' }, fields: { ...ENVELOPE, ...fields } });
    expectOk(whole('movement', { 'data.type': { from: 'type' }, 'data.status': { from: 'status' }, 'data.amount': { from: 'amount', type: 'json' }, 'data.debit': { from: 'debit', type: 'json' }, 'data.credit': { from: 'credit', type: 'json' }, 'data.geo': { from: 'geo', type: 'json' } }));
    expectOk(whole('relationship', { 'data.type': { from: 'type' }, 'data.from': { from: 'a', type: 'json' }, 'data.to': { from: 'b', type: 'json' }, 'data.valid_from': { from: 'since', type: 'datetime' } }));
    // Whole and part would write the same member.
    expectFinding(doc('movement', { 'data.geo': { from: 'g', type: 'json' }, 'data.geo.lat': { from: 'lat', type: 'number' } }), 'fields.data.geo.lat', /overlaps fields\.data\.geo/);
  });

  it('accepts money parts mapped separately', () => {
    const raw = doc('movement', {
      'data.amount.value': { from: 'minor' }, 'data.amount.asset': { from: 'ccy' }, 'data.amount.scale': { const: 2, type: 'integer' },
    });
    delete (raw.fields)['data.amount'];
    const mapping = expectOk(raw);
    expect(mapping.targets.map((t) => t.target)).toContain('data.amount.scale');
  });

  it('accepts any sub-path under a collection', () => {
    expectOk(doc('party', {
      'data.identifiers.0.type': { const: 'email' }, 'data.identifiers.0.value': { from: 'email' },
      'data.identifiers.1.whatever': { from: 'x' }, 'data.addresses.0.city': { from: 'city' },
      'data.legal_names.0': { from: 'name' }, 'data.expected_profile.corridors.0': { from: 'corridor' },
    }));
    expectOk(doc('party', { 'data.legal_names': { from: 'names', type: 'json' } }));
    expectOk(doc('movement', { 'data.fees.0': { type: 'money', ...USD }, 'data.fees.1.value': { from: 'fee2' }, 'data.fees.1.asset': { const: 'USD' } }));
    expectFinding(doc('movement', { 'data.identifiers.0.value': { from: 'x' } }), 'fields.data.identifiers.0.value', /not a field of movement/);
  });

  it('requires external_id and occurred_at', () => {
    const raw = doc('movement', {});
    delete (raw.fields).external_id;
    delete (raw.fields).occurred_at;
    const errors = errorsOf(raw);
    expect(errors).toEqual([
      { path: 'fields.external_id', code: 'svc:validation/schema', message: 'required target is missing' },
      { path: 'fields.occurred_at', code: 'svc:validation/schema', message: 'required target is missing' },
    ]);
  });

  it('accepts schema_version and recorded_at; refuses sequence on a fact', () => {
    expectOk(doc('party', { schema_version: { from: 'v' }, recorded_at: { from: 'rec', type: 'datetime' } }));
    expectFinding(doc('movement', SEQUENCE), 'fields.sequence', 'movement is a fact and carries no sequence');
  });

  it('refuses a target mapped both whole and in parts', () => {
    expectFinding(doc('movement', { 'data.amount.value': { from: 'v' } }), 'fields.data.amount.value', 'overlaps fields.data.amount: map the whole or its parts, not both');
    expectFinding(doc('party', { 'data.identifiers': { from: 'ids', type: 'json' }, 'data.identifiers.0.value': { from: 'v' } }), 'fields.data.identifiers.0.value', /overlaps fields\.data\.identifiers/);
  });
});

describe('rule 3: rule consistency', () => {
  const movement = (rules: Rules) => doc('movement', rules);

  it('from or const, exactly one, for every type but money', () => {
    expectFinding(movement({ 'data.memo': { optional: true } }), 'fields.data.memo', 'needs one of from or const');
    expectFinding(movement({ 'data.memo': { from: 'm', const: 'x' } }), 'fields.data.memo.const', 'exclusive with from');
    expectOk(movement({ 'data.memo': { const: null, optional: true, default: 'n/a' } }));
  });

  it('money: value and asset, each with exactly one of from or const; no from or const of its own', () => {
    expectFinding(movement({ 'data.amount': { type: 'money', from: 'a', value: { from: 'v' }, asset: { const: 'USD' } } }), 'fields.data.amount.from', /not used with type money/);
    expectFinding(movement({ 'data.amount': { type: 'money', const: '1', ...USD } }), 'fields.data.amount.const', /not used with type money/);
    expectFinding(movement({ 'data.amount': { type: 'money', asset: { const: 'USD' } } }), 'fields.data.amount.value', 'required for type money');
    expectFinding(movement({ 'data.amount': { type: 'money', value: { from: 'v' } } }), 'fields.data.amount.asset', 'required for type money');
    expectFinding(movement({ 'data.amount': { type: 'money', value: {}, asset: { const: 'USD' } } }), 'fields.data.amount.value', 'needs one of from or const');
    expectFinding(movement({ 'data.amount': { type: 'money', value: { from: 'v' }, asset: { from: 'a', const: 'USD' } } }), 'fields.data.amount.asset.const', 'exclusive with from');
  });

  it('map_default only with map, on a rule and on a money part', () => {
    expectFinding(movement({ 'data.type': { from: 't', map_default: 'other' } }), 'fields.data.type.map_default', 'only with map');
    expectOk(movement({ 'data.type': { from: 't', map: { P2P: 'p2p' }, map_default: 'other' } }));
    expectFinding(movement({ 'data.amount': { type: 'money', value: { from: 'v' }, asset: { from: 'a', map_default: 'USD' } } }), 'fields.data.amount.asset.map_default', 'only with map');
  });

  it('format, pattern and tz only with datetime', () => {
    expectFinding(movement({ 'data.memo': { from: 'm', format: 'epoch_s' } }), 'fields.data.memo.format', 'applies to type datetime only');
    expectFinding(movement({ 'data.memo': { from: 'm', pattern: 'YYYY-MM-DD' } }), 'fields.data.memo.pattern', 'applies to type datetime only');
    expectFinding(movement({ 'data.memo': { from: 'm', tz: 'Z' } }), 'fields.data.memo.tz', 'applies to type datetime only');
  });

  it('pattern iff format pattern, with a year, MM and DD', () => {
    const ts = (rule: Rules) => movement({ occurred_at: { from: 'ts', type: 'datetime', ...rule } });
    expectFinding(ts({ format: 'pattern' }), 'fields.occurred_at.pattern', 'required when format is pattern');
    expectFinding(ts({ pattern: 'YYYY-MM-DD' }), 'fields.occurred_at.pattern', 'only with format pattern');
    expectFinding(ts({ format: 'epoch_ms', pattern: 'YYYY-MM-DD' }), 'fields.occurred_at.pattern', 'only with format pattern');
    expectFinding(ts({ format: 'pattern', pattern: 'DD/MM HH:mm' }), 'fields.occurred_at.pattern', /needs a year/);
    expectFinding(ts({ format: 'pattern', pattern: 'YYYY-MM' }), 'fields.occurred_at.pattern', /a day \(DD\)/);
    expectFinding(ts({ format: 'pattern', pattern: 'YYYY-MM-DD DD' }), 'fields.occurred_at.pattern', /more than one DD token/);
    expectOk(ts({ format: 'pattern', pattern: 'DD.MM.YYYY HH:mm:ss.SSS' }));
    expectOk(ts({ format: 'pattern', pattern: 'YYYYMMDD' }));
    // YY (two-digit year) too, for exports such as the Berka bank file's 930101.
    expectOk(ts({ format: 'pattern', pattern: 'YYMMDD' }));
    expectFinding(ts({ format: 'pattern', pattern: 'YYYY-MM-DD H' }), 'fields.occurred_at.pattern', /stray H/);
    expectOk(ts({ format: 'pattern', pattern: "YYYY-MM-DD'T'HH" }));
  });

  it('tz: Z, an offset up to 14:59, or an IANA name', () => {
    for (const tz of ['Z', '+05:30', '-14:00', '+14:59', '+00:00', 'Europe/Paris', 'America/Argentina/Buenos_Aires', 'UTC']) expect(resolveTimeZone(tz).ok, tz).toBe(true);
    for (const tz of ['+15:00', '+05:60', '+5:00', '0530', '+05', 'Mars/Olympus_Mons', 'z', 'GMT+25']) expect(resolveTimeZone(tz).ok, tz).toBe(false);
    expectFinding(movement({ occurred_at: { from: 'ts', type: 'datetime', tz: '+15:00' } }), 'fields.occurred_at.tz', /offset \(hh at most 14\)/);
    expectOk(movement({ occurred_at: { from: 'ts', type: 'datetime', tz: 'Asia/Kolkata' } }));
  });

  it('true_values and false_values only with boolean, never overlapping (case-insensitive)', () => {
    expectFinding(movement({ 'data.memo': { from: 'm', true_values: ['Y'] } }), 'fields.data.memo.true_values', 'applies to type boolean only');
    expectFinding(movement({ 'data.memo': { from: 'm', false_values: ['N'] } }), 'fields.data.memo.false_values', 'applies to type boolean only');
    expectFinding(movement({ 'data.cash': { from: 'c', type: 'boolean', true_values: ['Y', 'x'], false_values: ['N', 'X'] } }), 'fields.data.cash.false_values.1', 'also in true_values (case-insensitive)');
    // The side not given keeps the spec's defaults.
    expectFinding(movement({ 'data.cash': { from: 'c', type: 'boolean', true_values: ['cash', 'NO'] } }), 'fields.data.cash.true_values.1', 'also in false_values (default) (case-insensitive)');
    expectOk(movement({ 'data.cash': { from: 'c', type: 'boolean', true_values: ['J'], false_values: ['N'] } }));
  });

  it('money keys only with money', () => {
    for (const key of ['value', 'asset', 'scale', 'units', 'decimal_separator', 'group_separator'] as const) {
      const rule = { value: { from: 'v' }, asset: { from: 'a' }, scale: 2, units: 'minor', decimal_separator: ',', group_separator: '.' }[key];
      expectFinding(movement({ 'data.memo': { from: 'm', [key]: rule } }), `fields.data.memo.${key}`, 'applies to type money only');
    }
  });

  it('separators differ and are not digits, signs or parentheses', () => {
    const money = (rule: Rules) => movement({ 'data.amount': { type: 'money', ...USD, ...rule } });
    expectOk(money({ decimal_separator: ',', group_separator: '.' }));
    expectOk(money({ group_separator: ' ' }));
    expectFinding(money({ decimal_separator: ',', group_separator: ',' }), 'fields.data.amount.group_separator', 'must differ from decimal_separator');
    expectFinding(money({ group_separator: '.' }), 'fields.data.amount.group_separator', 'must differ from decimal_separator (default .)');
    for (const bad of ['0', '7', '-', '+', '(', ')']) {
      expectFinding(money({ decimal_separator: bad }), 'fields.data.amount.decimal_separator', 'must not be a digit, -, +, ( or )');
      expectFinding(money({ group_separator: bad }), 'fields.data.amount.group_separator', 'must not be a digit, -, +, ( or )');
    }
  });

  it('type money exactly on money targets', () => {
    expectFinding(movement({ 'data.memo': { type: 'money', ...USD } }), 'fields.data.memo.type', 'type money applies to a money object only: data.amount, data.fees.<i>');
    expectFinding(movement({ 'data.fees': { type: 'money', ...USD } }), 'fields.data.fees.type', /applies to a money object only/);
    expectFinding(doc('account', { 'data.product_code': { type: 'money', ...USD } }), 'fields.data.product_code.type', 'account has no money fields');
    expectFinding(movement({ 'data.amount': { from: 'a' } }), 'fields.data.amount.type', /data\.amount is a money object: type must be money or json/);
    expectFinding(movement({ 'data.fees.0': { from: 'f', type: 'integer' } }), 'fields.data.fees.0.type', /money object/);
    // A money object already written as JSON in the source is taken whole.
    expectOk(movement({ 'data.amount': { from: 'a', type: 'json' }, 'data.fees.0': { from: 'f', type: 'json' } }));
    expectFinding(doc('party', { 'data.expected_profile.declared_monthly_volume': { from: 'v' } }), 'fields.data.expected_profile.declared_monthly_volume.type', /money object/);
    expectOk(doc('party', { 'data.expected_profile.declared_monthly_volume': { type: 'money', ...USD, units: 'minor', scale: 2 } }));
    expectOk(doc('control_event', { 'data.amount': { type: 'money', ...USD } }));
  });

  it('sequence is an integer, occurred_at and recorded_at are datetimes', () => {
    expectFinding(doc('party', { sequence: { from: 'v' } }), 'fields.sequence.type', 'must be integer');
    expectFinding(doc('party', { occurred_at: { from: 'ts' } }), 'fields.occurred_at.type', 'must be datetime');
    expectFinding(doc('party', { recorded_at: { from: 'r', type: 'string' } }), 'fields.recorded_at.type', 'must be datetime');
  });

  it('lists every finding at once', () => {
    const errors = errorsOf(movement({ 'data.memo': { from: 'm', const: 'x', tz: 'Z' }, 'data.amout': { from: 'a' }, sequence: { from: 's', type: 'integer' } }));
    expect(errors.map((e) => e.path).sort()).toEqual(['fields.data.amout', 'fields.data.memo.const', 'fields.data.memo.tz', 'fields.sequence']);
  });
});

describe('rule 4: the CSV dialect', () => {
  const csv = (format: Rules, fields: Rules = {}, extra: Rules = {}) => doc('movement', fields, { kind: 'csv', ...format }, extra);
  const COLUMNS = ['id', 'ts', 'type', 'amount', 'from_acct', 'to_acct'];

  it('delimiter differs from quote (defaults included) and is no line break', () => {
    expectFinding(csv({ delimiter: "'", quote: "'" }), 'format.delimiter', 'delimiter and quote must differ');
    expectFinding(csv({ delimiter: '"' }), 'format.delimiter', 'delimiter and quote must differ');
    expectFinding(csv({ quote: ',' }), 'format.quote', 'delimiter and quote must differ');
    expectFinding(csv({ delimiter: '\n' }), 'format.delimiter', 'must not be a line break');
    expectOk(csv({ delimiter: '\t', quote: "'" }));
  });

  it('has_header false requires columns and forbids header_per_chunk', () => {
    expectFinding(csv({ has_header: false }), 'format.columns', 'required when has_header is false');
    expectFinding(csv({ has_header: false, columns: COLUMNS, header_per_chunk: true }), 'format.header_per_chunk', /needs has_header/);
    expectOk(csv({ has_header: false, columns: COLUMNS }));
    expectOk(csv({ header_per_chunk: true }));
  });

  it('refuses duplicate column names', () => {
    expectFinding(csv({ columns: [...COLUMNS, 'ts'] }), 'format.columns.6', 'duplicate column name ts');
    // Suggestions name each column once even when the list repeats one.
    expectFinding(csv({ columns: ['ts', 'id', 'ts'] }, { 'data.memo': { from: 'tz' } }), 'fields.data.memo.from', 'not one of format.columns; nearest: ts, id');
  });

  it('every from names a given column, with the nearest names', () => {
    expectFinding(csv({ columns: COLUMNS }, { 'data.memo': { from: 'amont' } }), 'fields.data.memo.from', /^not one of format\.columns; nearest: amount, /);
    expectFinding(csv({ columns: COLUMNS }, { 'data.amount': { type: 'money', value: { from: 'amt' }, asset: { from: 'ccy' } } }), 'fields.data.amount.asset.from', /not one of format\.columns/);
    expectFinding(csv({ columns: COLUMNS }, {}, { row_filter: { from: 'kind', op: 'eq', values: ['x'] } }), 'row_filter.from', /not one of format\.columns/);
    expectOk(csv({ columns: COLUMNS }, {}, { row_filter: { from: 'type', op: 'in', values: ['a', 'b'] } }));
    // Without explicit columns the header is not known yet: any from is accepted here.
    expectOk(csv({}, { 'data.memo': { from: 'anything at all' } }, { row_filter: { from: 'kind', op: 'ne', values: ['x'] } }));
  });

  it('JSONL from is a dotted path, not checked against anything', () => {
    expectOk(doc('movement', { 'data.memo': { from: 'notes.0.text' } }, { kind: 'jsonl' }, { row_filter: { from: 'meta.kind', op: 'not_in', values: ['test'] } }));
  });
});

describe('rule 5: the missing-sequence warning', () => {
  for (const family of FAMILY_NAMES) {
    it(`${family}: ${FAMILIES[family].kind}`, () => {
      const raw = doc(family, {});
      delete (raw.fields).sequence;
      expect(expectOk(raw).warnings).toEqual(FAMILIES[family].kind === 'entity' ? [NO_SEQUENCE_WARNING] : []);
    });
  }
});

describe('messages', () => {
  it('never echo constants, defaults, map entries or boolean words', () => {
    const secret = 'SECRET-4111111111111111';
    const errors = errorsOf(doc('movement', {
      'data.memo': { from: 'm', const: secret, default: secret, map: { [secret]: secret }, map_default: secret, tz: secret },
      'data.cash': { from: 'c', type: 'boolean', true_values: [secret], false_values: [secret.toLowerCase()] },
      'data.amount': { type: 'money', value: { from: 'v', const: secret }, asset: { const: secret, map_default: secret } },
      occurred_at: { from: 'ts', type: 'datetime', format: 'pattern', pattern: `${secret}YYYY` },
    }));
    expect(errors.length).toBeGreaterThan(5);
    for (const e of errors) expect(e.message.toLowerCase()).not.toContain('secret');
  });
});

describe('suggestions', () => {
  it('rank by edit distance with transpositions costing one', () => {
    expect(editDistance('amount', 'amuont')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('data.amout', 'data.amount')).toBe(1);
    expect(nearest('data.amout', familyTargets('movement'))[0]).toBe('data.amount');
    expect(nearest('b', ['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toEqual(['b', 'a', 'c', 'd', 'e']);
  });
});
