import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseAggregateStore } from './clickhouse.ts';
import { decimal, identifier, integer, parseTabSeparated, quote, sql, Sql, stored, unescapeField } from './clickhouse-escape.ts';
import { clickhouseUrlOr, testClickHouse, type TestClickHouse } from './clickhouse-test-kit.ts';
import type { Activity, Subject } from './port.ts';

// The one way customer strings reach ClickHouse SQL (quote, through the sql tag), fuzzed with
// hostile strings: what a literal may contain at all (no server needed), then, against the run's
// ClickHouse, that a SELECT of each literal returns exactly its value, one row of one column, and
// that nothing else ran (a canary table survives every `'; DROP TABLE`); finally the store itself
// keeps and returns hostile ids, counterparties and countries exactly.

const HOSTILE: string[] = [
  '',
  "'",
  "''",
  "\\'",
  '\\',
  '\\\\',
  "\\'; DROP TABLE canary; --",
  "'; DROP TABLE canary; --",
  "x'); DROP TABLE canary; SELECT ('",
  "' OR 1 = 1 --",
  "'\n; DROP TABLE canary\n--",
  '"; DROP TABLE canary; --',
  '`canary`',
  '\u0000',
  'a\u0000b',
  '\u0000\'; DROP TABLE canary; --',
  '\n',
  '\r\n',
  '\t',
  'tab\there\nnewline\rreturn',
  '\\N',
  '\\0',
  '\\x27',
  '\\x',
  "\\u0027",
  '/* comment */',
  '-- comment',
  '#',
  '{name:String}',
  '{database}',
  '?',
  '%27',
  '$1',
  ' FORMAT JSON',
  ';',
  'é',
  'e\u0301',
  'Ωμέγα',
  '日本語',
  '\u202Egnp.exe',
  '\uFEFF',
  '\uFFFF',
  '\uFFFD',
  '😀',
  '👩‍👩‍👧',
  '\u{10FFFF}',
  '\uD800',
  '\uDC00',
  'a\uD83Db',
  '\uDE00\uD83D',
  '\uD83D\uDE00\uD83D',
  '\u0080\u00FF',
  '\u007F',
  'x'.repeat(10_000),
  "'".repeat(10_000),
  '\\'.repeat(10_001),
  '😀'.repeat(20_000),
  'a\u0000'.repeat(50_000),
];

// A deterministic generator of nasty strings: ASCII controls and quotes, backslashes, Latin-1,
// BMP text, lone surrogates of both halves, astral characters, noncharacters.
function fuzzStrings(seed: number, count: number): string[] {
  let state = seed >>> 0;
  const next = (n: number) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state % n;
  };
  const pools: Array<() => string> = [
    () => String.fromCharCode(next(32)),
    () => ["'", '\\', '"', '`', ';', '-', '/', '*', '{', '}', '?', '$', '%', '\n', '\r', '\t', '\u0000'][next(17)]!,
    () => String.fromCharCode(32 + next(95)),
    () => String.fromCharCode(0x80 + next(0x180)),
    () => String.fromCharCode(0x0800 + next(0xd000)),
    () => String.fromCharCode(0xd800 + next(0x800)),
    () => String.fromCodePoint(0x10000 + next(0x100000)),
    () => ['\uFFFE', '\uFFFF', '\uFEFF', '\u200B', '\u2028', '\u2029', '\u0301'][next(7)]!,
    () => "'; DROP TABLE canary; --",
  ];
  return Array.from({ length: count }, () => {
    const length = next(5) === 0 ? next(300) : next(24);
    let s = '';
    for (let i = 0; i < length; i++) s += pools[next(pools.length)]!();
    return s;
  });
}

const FUZZ = fuzzStrings(20_260_820, 1_500);

// ClickHouse's TabSeparated escaping of output fields (WriteHelpers' writeEscapedString), to fuzz
// the decoder against.
function tsvEscape(value: string): string {
  return value.replace(/[\\\t\n\r\b\f\0']/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\0': '\\0', "'": "\\'" })[c]!);
}

describe('quote', () => {
  it('writes only harmless ASCII between its two quotes, every other byte as \\xHH', () => {
    for (const value of [...HOSTILE, ...FUZZ]) {
      const literal = quote(value);
      expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
      const body = literal.slice(1, -1);
      // No quote inside; each backslash starts a \xHH escape; only printable ASCII at all.
      expect(body.includes("'")).toBe(false);
      expect(body.replace(/\\x[0-9A-F]{2}/g, '')).toMatch(/^[A-Za-z0-9 _\-.:,;@/+=<>#%&*()[\]!~^|]*$/);
      // Decoding the escapes gives back the UTF-8 bytes of the value (well formed).
      const bytes = Buffer.from(body.replace(/\\x([0-9A-F]{2})|([^\\])/g, (_, hex: string | undefined, c: string | undefined) => (hex ? String.fromCharCode(parseInt(hex, 16)) : c!)), 'latin1');
      expect(bytes.equals(Buffer.from(value, 'utf8'))).toBe(true);
    }
  });

  it('refuses anything but a string', () => {
    expect(() => quote(42 as unknown as string)).toThrow(TypeError);
    expect(() => quote(null as unknown as string)).toThrow(TypeError);
  });

  it('stores a lone surrogate as U+FFFD, as node-postgres sends it to PostgreSQL', () => {
    expect(stored('a\uD800b')).toBe('a\uFFFDb');
    expect(stored('😀')).toBe('😀');
    expect(quote('\uD800')).toBe(quote('\uFFFD'));
  });
});

describe('the sql tag', () => {
  it('quotes strings, writes integers, and inserts only Sql fragments as they are', () => {
    const name = "x'; DROP TABLE canary; --";
    expect(sql`SELECT ${name}, ${42}, ${-7n}, ${true}, ${null}, ${[1, 'a']}, ${identifier('t1')}`.text).toBe(
      `SELECT ${quote(name)}, 42, -7, 1, NULL, 1, 'a', t1`,
    );
    expect(sql`${decimal(10n ** 37n)}`.text).toBe("toDecimal128('10000000000000000000000000000000000000', 0)");
  });

  it('refuses what it cannot write safely', () => {
    expect(() => sql`${1.5}`).toThrow(RangeError);
    expect(() => sql`${Number.NaN}`).toThrow(RangeError);
    expect(() => sql`${2 ** 60}`).toThrow(RangeError);
    expect(() => sql`${undefined as unknown as string}`).toThrow(TypeError);
    expect(() => sql`${{ text: 'DROP TABLE canary' }}`).toThrow(TypeError);
    expect(() => identifier('svc; DROP TABLE canary')).toThrow(RangeError);
    expect(() => identifier('`x`')).toThrow(RangeError);
    expect(() => integer(0.1)).toThrow(RangeError);
    expect(integer(-0)).toBe('0');
  });
});

describe('parseTabSeparated', () => {
  it('undoes ClickHouse\'s field escaping exactly, and tells NULL from the text \\N', () => {
    const values = [...HOSTILE, ...FUZZ].map(stored);
    const text = `v\tw\n${values.map((v) => `${tsvEscape(v)}\t\\N`).join('\n')}\n`;
    const rows = parseTabSeparated(text);
    expect(rows.map((row) => row.v)).toEqual(values);
    expect(rows.every((row) => row.w === null)).toBe(true);
    expect(unescapeField(tsvEscape('\\N'))).toBe('\\N');
    expect(parseTabSeparated('')).toEqual([]);
    expect(() => unescapeField('a\\')).toThrow();
    expect(() => parseTabSeparated('a\tb\n1\n')).toThrow();
  });
});

const url = clickhouseUrlOr('quote against ClickHouse');
if (url) {
  describe('quote against ClickHouse', () => {
    let server: TestClickHouse;
    let client: ClickHouseClient;
    let store: ClickHouseAggregateStore;
    let canary: Sql;
    beforeAll(async () => {
      server = testClickHouse(url);
      client = server.client;
      store = new ClickHouseAggregateStore(client, server.database);
      await store.migrate();
      canary = sql`${identifier(server.database)}.canary`;
      await client.command({ query: sql`CREATE TABLE ${canary} (x UInt8) ENGINE = TinyLog`.text });
      await client.command({ query: sql`INSERT INTO ${canary} VALUES (1)`.text });
    });
    afterAll(async () => {
      await server?.drop();
    });

    const select = async (statement: Sql) => {
      const size = statement.text.length;
      const settings = size > 200_000 ? { max_query_size: String(size + 1024), max_ast_elements: String(size), max_expanded_ast_elements: String(4 * size) } : {};
      const result = await client.query({ query: statement.text, format: 'TabSeparatedWithNames', clickhouse_settings: settings });
      return parseTabSeparated(await result.text());
    };

    it('returns exactly each hostile value, one row of one value, its bytes those of the value', async () => {
      for (const value of HOSTILE) {
        const rows = await select(sql`SELECT ${value} AS v, hex(${value}) AS h, length(${value}) AS n`);
        expect(rows).toHaveLength(1);
        expect(Object.keys(rows[0]!)).toEqual(['v', 'h', 'n']);
        expect(rows[0]!.v).toBe(stored(value));
        expect(rows[0]!.h).toBe(Buffer.from(value, 'utf8').toString('hex').toUpperCase());
        expect(Number(rows[0]!.n)).toBe(Buffer.byteLength(value, 'utf8'));
      }
    });

    it('returns exactly each of 1 500 generated values, in statements of a hundred literals', async () => {
      for (let i = 0; i < FUZZ.length; i += 100) {
        const slice = FUZZ.slice(i, i + 100);
        const parts = slice.map((value, j) => sql`SELECT ${j} AS i, ${value} AS v, hex(${value}) AS h`);
        const union = new Sql(parts.map((part) => part.text).join('\nUNION ALL\n'));
        const rows = await select(sql`SELECT i, v, h FROM (${union}) ORDER BY i`);
        expect(rows.map((row) => Number(row.i))).toEqual(slice.map((_, j) => j));
        expect(rows.map((row) => row.v)).toEqual(slice.map(stored));
        expect(rows.map((row) => row.h)).toEqual(slice.map((value) => Buffer.from(value, 'utf8').toString('hex').toUpperCase()));
      }
    });

    it('ran nothing else: the canary table is still there, unchanged', async () => {
      expect(await select(sql`SELECT x FROM ${canary}`)).toEqual([{ x: '1' }]);
      const tables = await select(sql`SELECT name FROM system.tables WHERE database = ${server.database} ORDER BY name`);
      expect(tables.map((row) => row.name)).toEqual(['agg_activity', 'agg_retraction', 'canary', 'schema_migrations']);
    });

    it('keeps hostile tenant ids, subject ids, movement ids, counterparties and countries apart and returns them exactly', async () => {
      const at = new Date('2026-08-20T12:00:00.000Z');
      // One value per stored form (a lone surrogate and U+FFFD are the same id once stored).
      const byStored = new Map<string, string>();
      for (const value of [...HOSTILE.filter((v) => v.length < 1_000), ...FUZZ.slice(0, 200)]) if (!byStored.has(stored(value))) byStored.set(stored(value), value);
      const values = [...byStored.values()];
      const activities: Activity[] = values.map((value, i) => ({
        subject: { tenantId: `t${value}`, kind: i % 2 ? 'party' : 'account', id: value },
        movementId: value,
        eventId: randomUUID(),
        direction: i % 3 ? 'in' : 'out',
        occurredAt: new Date(at.getTime() - (i + 1) * 60_000),
        amount: { value: BigInt(i + 1), scale: 2, asset: value },
        baseValue: BigInt(i + 1),
        cash: false,
        counterparty: value,
        counterpartyCountry: value,
        corridor: `${value}>${value}`,
      }));
      expect(await store.record(activities)).toBe(activities.length);
      expect(await store.record(activities)).toBe(0);
      const check = async (activity: Activity) => {
        const who: Subject = activity.subject;
        const listed = await store.activities(who, new Date(at.getTime() - 86_400_000), at);
        expect(listed.map((row) => [row.movementId, row.counterparty, row.counterpartyCountry, row.corridor, row.amount.asset])).toContainEqual(
          [stored(activity.movementId), stored(activity.counterparty!), stored(activity.counterpartyCountry!), stored(activity.corridor!), stored(activity.amount.asset)],
        );
        const history = await store.counterparty(who, activity.counterparty!);
        expect(history?.firstSeenAt).toEqual(activity.occurredAt);
        const [day] = await store.windows(who, at, { windows: ['24h'] });
        expect(day!.countries.map((group) => group.key)).toContain(stored(activity.counterpartyCountry!));
      };
      for (let i = 0; i < activities.length; i += 8) await Promise.all(activities.slice(i, i + 8).map(check));
      const [snapshot] = await store.snapshots([{ subject: activities[7]!.subject, at }], 100);
      expect(snapshot!.rows.map((row) => row.movementId)).toContain(stored(activities[7]!.movementId));
      expect(await select(sql`SELECT x FROM ${canary}`)).toEqual([{ x: '1' }]);
    });
  });
}
