// The text boundary between the ClickHouse aggregate store and its server, both ways.
//
// In: ClickHouse 18.16 (Debian's package) has no query parameters, so values travel inside the
// query text. The one function that puts a value there is `quote`: the value's UTF-8 bytes, each
// byte outside a short list of harmless ASCII characters written as a \xHH escape. The literal it
// returns therefore contains no quote, no backslash other than those of its own escapes, no
// control character and no non-ASCII byte: it cannot end early or change the statement around it,
// whatever the value holds. Everything else that reaches a statement is a number checked to be an
// integer, or SQL written here. The `sql` tag is how statements are built: it quotes every string,
// formats every number, and inserts only `Sql` fragments as they are, so a customer's string
// cannot be spliced into a statement as text by mistake.
//
// Out: results are read as TabSeparatedWithNames, whose fields ClickHouse escapes (\t, \n, \\, …,
// \N for NULL); `parseTabSeparated` undoes exactly that. Money comes back as the decimal text of
// the column (ClickHouse 18.16's toString(Decimal128) is broken for values past 2^64, and JSON
// would turn it into a floating-point number), numbers as text, strings as they were stored.
//
// JavaScript strings are UTF-16 and ClickHouse strings are bytes: a string holding an unpaired
// surrogate has no UTF-8 form, and is stored as its well-formed version (each lone surrogate
// U+FFFD), exactly as node-postgres sends it to PostgreSQL: both adapters see the same key.

// Bytes written as themselves inside a literal: letters, digits and punctuation with no meaning
// in a ClickHouse string literal. Everything else (quotes, backslash, control bytes, ?, {, every
// byte of a multi-byte character…) is escaped.
const SAFE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _-.:,;@/+=<>#%&*()[]!~^|') SAFE[c.charCodeAt(0)] = 1;
const SAFE_TEXT = /^[A-Za-z0-9 _\-.:,;@/+=<>#%&*()[\]!~^|]*$/;
const HEX = Array.from({ length: 256 }, (_, byte) => `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`);

// A ClickHouse string literal whose value is `value`'s UTF-8 bytes.
export function quote(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`quote expects a string, got ${typeof value}`);
  if (SAFE_TEXT.test(value)) return `'${value}'`;
  let out = "'";
  for (const byte of Buffer.from(value, 'utf8')) out += SAFE[byte] ? String.fromCharCode(byte) : HEX[byte]!;
  return `${out}'`;
}

// The string ClickHouse stores for `value`: itself when well formed, else with each lone surrogate
// replaced (what quote sends, read back).
export function stored(value: string): string {
  return Buffer.from(value, 'utf8').toString('utf8');
}

// A piece of SQL: the only thing the `sql` tag inserts as it is.
export class Sql {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type SqlValue = string | number | bigint | boolean | null | Sql | readonly SqlValue[];

// A statement from a template: strings are quoted, integers written in decimal, booleans as 1/0,
// null as NULL, arrays as comma-separated lists of their items, Sql fragments as they are.
// Anything else (a fractional or non-finite number, an object, undefined) is refused.
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): Sql {
  let text = strings[0]!;
  values.forEach((value, i) => {
    text += render(value) + strings[i + 1]!;
  });
  return new Sql(text);
}

function render(value: SqlValue): string {
  if (value instanceof Sql) return value.text;
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return integer(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return value.map(render).join(', ');
  throw new TypeError(`cannot put a ${typeof value} into SQL`);
}

export function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`expected a safe integer, got ${value}`);
  // -0 is written 0.
  return String(value === 0 ? 0 : value);
}

// A Decimal(38, 0) value in an expression (a bare literal past 2^64 would be read as a Float64).
export function decimal(value: bigint): Sql {
  if (typeof value !== 'bigint') throw new TypeError(`decimal expects a bigint, got ${typeof value}`);
  return new Sql(`toDecimal128(${quote(value.toString())}, 0)`);
}

// A database or table name: checked, never quoted (no customer data is ever a name).
export function identifier(name: string): Sql {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new RangeError(`not a plain identifier: ${JSON.stringify(name)}`);
  return new Sql(name);
}

// --- results ---------------------------------------------------------------------------------

export type TsvRow = Record<string, string | null>;

// The rows of a TabSeparatedWithNames result: the header names the columns; each field is
// unescaped, and a field that is exactly \N is NULL.
export function parseTabSeparated(text: string): TsvRow[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error('a TabSeparated result ends with a newline');
  const lines = text.slice(0, -1).split('\n');
  const names = lines[0]!.split('\t').map((field) => {
    const name = unescapeField(field);
    if (name === null) throw new Error('a column without a name');
    return name;
  });
  const rows: TsvRow[] = [];
  for (let i = 1; i < lines.length; i++) {
    const fields = lines[i]!.split('\t');
    if (fields.length !== names.length) throw new Error(`row ${i} has ${fields.length} fields, the header ${names.length}`);
    const row: TsvRow = {};
    names.forEach((name, j) => {
      row[name] = unescapeField(fields[j]!);
    });
    rows.push(row);
  }
  return rows;
}

const UNESCAPED: Record<string, string> = {
  '0': '\u0000', a: '\u0007', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '"': '"', '\\': '\\', '/': '/',
};

export function unescapeField(field: string): string | null {
  if (field === '\\N') return null;
  if (!field.includes('\\')) return field;
  let out = '';
  for (let i = 0; i < field.length; i++) {
    const c = field[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = field[++i];
    if (next === undefined) throw new Error('a field ends in a lone backslash');
    const plain = UNESCAPED[next];
    if (plain !== undefined) out += plain;
    else throw new Error(`unknown escape \\${next} in a TabSeparated field`);
  }
  return out;
}
