import { z } from 'zod';
import { FAMILIES, FAMILY_NAMES, type Family } from '../../../schemas/families/index.ts';
import {
  fieldRuleSchema, mappingDocumentSchema, rowFilterSchema,
  type CsvFormat, type FieldRule, type FieldType, type JsonlFormat, type MappingDocument, type MoneyPart, type RowFilter,
} from '../../../schemas/imports/mapping.ts';
import type { FieldError } from '../../../schemas/problem.ts';
import { requestSchemaErrors } from '../../../schemas/validation/request-errors.ts';
import { isPlainObject } from '../../../schemas/validation/validate-item.ts';
import { compilePattern, resolveTimeZone } from './datetime.ts';
import { ROW_NUMBER_SOURCE } from '../../../schemas/imports/mapping.ts';
import { DEFAULT_FALSE_VALUES, DEFAULT_TRUE_VALUES } from './values.ts';
import { REQUIRED_TARGETS, classifyTarget, familyTargets, moneyTargets, nearest, requiredObjectsUnder, targetsUnder, type TargetKind } from './targets.ts';

export { familyTargets } from './targets.ts';

// Compiles an import mapping document once, before any row is read: the zod schema first, then
// what zod cannot say alone (target paths of the family, rules between keys, CSV dialect), so a
// bad mapping is refused up front with every finding rather than rejecting every row.
//
// Finding paths are dotted from the document root. A rule's path is `fields.<target>` or
// `fields.<target>.<key>` with the target's own dots kept: `fields.data.amount.scale` is key
// `scale` of target `data.amount`, `fields.data.amount.value.from` the `from` of its value part.
// Dialect findings are `format.<key>` (`format.columns.<i>`), the filter's `row_filter.from`.
// Messages name targets and columns, never a value from the customer's rows.

interface CompiledTarget { target: string; path: string[]; rule: FieldRule; type: FieldType }
export interface CompiledMapping {
  document: MappingDocument;
  family: Family;
  targets: CompiledTarget[]; // in document order
  // Required objects the targets map parts of, each made (empty) when none of its parts has a value.
  requiredObjects: string[][];
  warnings: string[];
  csv?: {
    delimiter: string; quote: string; hasHeader: boolean; headerPerChunk: boolean; columns?: string[];
    skipLeadingRows: number; commentPrefix?: string; nullValues: string[];
  };
  jsonl?: { skipLeadingRows: number; commentPrefix?: string; nullValues: string[] };
}
export type CompileOutcome = { ok: true; mapping: CompiledMapping } | { ok: false; errors: FieldError[] };

export const NO_SEQUENCE_WARNING = 'no sequence mapped: only the first version of each entity would land';

type Add = (path: string, message: string) => void;

export function compileMapping(raw: unknown): CompileOutcome {
  const parsed = mappingDocumentSchema.safeParse(raw);
  const errors = parsed.success ? [] : requestSchemaErrors(parsed.error);
  const add: Add = (path, message) => errors.push({ path, code: 'svc:validation/schema', message });
  const warnings = checkParts(pieces(raw), add);
  if (!parsed.success || errors.length > 0) return { ok: false, errors };
  return { ok: true, mapping: compiled(parsed.data, warnings) };
}

// The pieces of the document the checks below read, each present only when it is well formed.
interface Parts {
  family?: Family;
  format?: CsvFormat | JsonlFormat;
  fields?: Array<[string, FieldRule | undefined]>; // a target whose rule is malformed keeps its path check
  rowFilter?: RowFilter;
}

// Each piece is parsed on its own, so when the schema refuses the document the well-formed rest
// is still checked and one reply lists every finding. Targets are the raw document's own keys:
// zod's record parse drops a `__proto__` key silently, here it is refused like any unknown path.
function pieces(raw: unknown): Parts {
  if (!isPlainObject(raw)) return {};
  const fields = isPlainObject(raw.fields) ? raw.fields : undefined;
  return {
    family: z.enum(FAMILY_NAMES).safeParse(raw.family).data,
    format: mappingDocumentSchema.shape.format.safeParse(raw.format).data,
    fields: fields && Object.entries(fields).map(([target, rule]) => [target, fieldRuleSchema.safeParse(rule).data]),
    rowFilter: rowFilterSchema.safeParse(raw.row_filter).data,
  };
}

function checkParts({ family, format, fields, rowFilter }: Parts, add: Add): string[] {
  const warnings: string[] = [];
  if (format?.kind === 'csv') checkCsv(format, add);
  // Explicit columns are the only names known before the file; a header is checked per chunk.
  const columns = format?.kind === 'csv' ? format.columns : undefined;
  const column = (path: string, from: string | readonly string[] | undefined) => {
    if (typeof from !== 'string') {
      from?.forEach((part, i) => column(`${path}.${i}`, part));
      return;
    }
    if (columns && from !== ROW_NUMBER_SOURCE && !columns.includes(from)) {
      add(path, `not one of format.columns; nearest: ${nearest(from, columns).join(', ')}`);
    }
  };
  column('row_filter.from', rowFilter?.from);
  if (!fields) return warnings;

  const targets = fields.map(([target]) => target);
  if (family) {
    for (const required of REQUIRED_TARGETS) if (!targets.includes(required)) add(`fields.${required}`, 'required target is missing');
    if (FAMILIES[family].kind === 'entity' && !targets.includes('sequence')) warnings.push(NO_SEQUENCE_WARNING);
  }
  for (const target of targets) {
    const whole = targets.find((other) => target.startsWith(`${other}.`));
    // Both would write the same member; which wins would depend on key order.
    if (whole !== undefined) add(`fields.${target}`, `overlaps fields.${whole}: map the whole or its parts, not both`);
  }
  for (const [target, rule] of fields) {
    const kind = family && checkTarget(family, target, rule?.type, add);
    if (!rule) continue;
    checkRule(target, rule, add, family, kind);
    column(`fields.${target}.from`, rule.from);
    column(`fields.${target}.value.from`, rule.value?.from);
    column(`fields.${target}.asset.from`, rule.asset?.from);
  }
  return warnings;
}

// The target's kind when it is a real target of the family; undefined (and a finding) otherwise.
// An object of data (data.debit, data.geo) is a target for type json only: the spec lets json go
// to any data.<path>, and the row's schema check judges the object. data itself is not a path.
function checkTarget(family: Family, target: string, type: FieldType | undefined, add: Add): TargetKind | undefined {
  const kind = classifyTarget(family, target);
  const at = `fields.${target}`;
  if (kind === undefined) {
    add(at, `not a field of ${family}; nearest: ${nearest(target, familyTargets(family)).join(', ')}`);
  } else if (kind === 'object' && (type !== 'json' || target === 'data')) {
    const under = targetsUnder(family, target);
    const whole = target === 'data' ? '' : ' (or map it whole with type json)';
    add(at, `an object of ${family}, not a field; map its fields${whole}: ${under.slice(0, 5).join(', ')}${under.length > 5 ? ', ...' : ''}`);
  } else if (target === 'sequence' && FAMILIES[family].kind === 'fact') {
    // Live validation refuses a sequence on a fact, so every row would be rejected.
    add(at, `${family} is a fact and carries no sequence`);
  } else {
    return kind;
  }
  return undefined;
}

// A Map, not an object literal: targets are the customer's keys (`constructor`, `__proto__`).
const ENVELOPE_TYPES = new Map<string, FieldType>([['sequence', 'integer'], ['occurred_at', 'datetime'], ['recorded_at', 'datetime']]);
const MONEY_KEYS = ['value', 'asset', 'scale', 'units', 'decimal_separator', 'group_separator'] as const;
const DATETIME_KEYS = ['format', 'pattern', 'tz'] as const;
const BOOLEAN_KEYS = ['true_values', 'false_values'] as const;
// Characters that are part of an amount's own notation (sign, accounting parentheses, digits).
const RESERVED_SEPARATOR = /^[0-9+\-()]$/;

function checkRule(target: string, rule: FieldRule, add: Add, family?: Family, kind?: TargetKind): void {
  const at = (...keys: string[]) => ['fields', target, ...keys].join('.');
  const type = rule.type ?? 'string';
  const onlyWith = (keys: readonly (keyof FieldRule)[], wanted: FieldType) => {
    if (type !== wanted) for (const key of keys) if (rule[key] !== undefined) add(at(key), `applies to type ${wanted} only`);
  };
  onlyWith(MONEY_KEYS, 'money');
  onlyWith(DATETIME_KEYS, 'datetime');
  onlyWith(BOOLEAN_KEYS, 'boolean');

  if (type === 'money') {
    for (const key of ['from', 'const'] as const) {
      if (rule[key] !== undefined) add(at(key), 'not used with type money: value and asset name the sources');
    }
    for (const part of ['value', 'asset'] as const) {
      const source = rule[part];
      if (source === undefined) add(at(part), 'required for type money');
      else checkSource(source, (...keys) => at(part, ...keys), add);
    }
    if (rule.map_default !== undefined && rule.map === undefined) add(at('map_default'), 'only with map');
    checkSeparators(rule, at, add);
  } else {
    checkSource(rule, at, add);
  }
  if (type === 'datetime') checkDatetime(rule, at, add);
  if (type === 'boolean') checkBooleanWords(rule, at, add);

  const envelopeType = ENVELOPE_TYPES.get(target);
  if (envelopeType !== undefined && type !== envelopeType) add(at('type'), `must be ${envelopeType}`);
  if (kind === 'money' && type !== 'money' && type !== 'json') {
    add(at('type'), `${target} is a money object: type must be money or json (or map its parts, ${target}.value and so on, separately)`);
  }
  if (family && kind !== undefined && kind !== 'money' && type === 'money') {
    const money = moneyTargets(family);
    add(at('type'), money.length > 0 ? `type money applies to a money object only: ${money.join(', ')}` : `${family} has no money fields`);
  }
}

// from or const, exactly one; map_default needs map. For a plain rule and for a money part.
function checkSource(source: FieldRule | MoneyPart, at: (...keys: string[]) => string, add: Add): void {
  if (source.from === undefined && source.const === undefined) add(at(), 'needs one of from or const');
  if (source.from !== undefined && source.const !== undefined) add(at('const'), 'exclusive with from');
  if (source.map_default !== undefined && source.map === undefined) add(at('map_default'), 'only with map');
}

function checkSeparators(rule: FieldRule, at: (...keys: string[]) => string, add: Add): void {
  for (const key of ['decimal_separator', 'group_separator'] as const) {
    const separator = rule[key];
    if (separator !== undefined && RESERVED_SEPARATOR.test(separator)) add(at(key), 'must not be a digit, -, +, ( or )');
  }
  // The decimal separator defaults to '.', so a lone group separator '.' is ambiguous too.
  if (rule.group_separator !== undefined && rule.group_separator === (rule.decimal_separator ?? '.')) {
    add(at('group_separator'), rule.decimal_separator === undefined ? 'must differ from decimal_separator (default .)' : 'must differ from decimal_separator');
  }
}

function checkDatetime(rule: FieldRule, at: (...keys: string[]) => string, add: Add): void {
  if (rule.format === 'pattern') {
    if (rule.pattern === undefined) add(at('pattern'), 'required when format is pattern');
    else {
      const compiled = compilePattern(rule.pattern);
      if (!compiled.ok) add(at('pattern'), compiled.reason);
    }
  } else if (rule.pattern !== undefined) {
    add(at('pattern'), 'only with format pattern');
  }
  if (rule.tz !== undefined) {
    const zone = resolveTimeZone(rule.tz);
    if (!zone.ok) add(at('tz'), zone.reason);
  }
}

// The spec's defaults apply to the side not given, so a lone true_values: ['0'] collides with the
// default false words too. Positions are reported, never the words.

function checkBooleanWords(rule: FieldRule, at: (...keys: string[]) => string, add: Add): void {
  if (rule.true_values === undefined && rule.false_values === undefined) return;
  const reported = rule.false_values !== undefined ? 'false_values' : 'true_values';
  const other = reported === 'false_values' ? (rule.true_values ?? DEFAULT_TRUE_VALUES) : DEFAULT_FALSE_VALUES;
  const otherWords = new Set(other.map((w) => w.toLowerCase()));
  const otherName = reported === 'false_values' ? 'true_values' : 'false_values';
  const defaulted = rule[otherName] === undefined ? ' (default)' : '';
  (rule[reported] ?? []).forEach((word, i) => {
    if (otherWords.has(word.toLowerCase())) add(at(reported, String(i)), `also in ${otherName}${defaulted} (case-insensitive)`);
  });
}

function checkCsv(format: CsvFormat, add: Add): void {
  const delimiter = format.delimiter ?? ',';
  const quote = format.quote ?? '"';
  if (delimiter === quote) add(format.delimiter !== undefined ? 'format.delimiter' : 'format.quote', 'delimiter and quote must differ');
  for (const key of ['delimiter', 'quote'] as const) {
    if (format[key] === '\n' || format[key] === '\r') add(`format.${key}`, 'must not be a line break');
  }
  if (format.has_header === false && format.columns === undefined) add('format.columns', 'required when has_header is false');
  if (format.has_header === false && format.header_per_chunk === true) {
    add('format.header_per_chunk', 'needs has_header: chunks cannot repeat a header the file does not have');
  }
  format.columns?.forEach((name, i) => {
    if (format.columns!.indexOf(name) !== i) add(`format.columns.${i}`, `duplicate column name ${name}`);
  });
}

function compiled(doc: MappingDocument, warnings: string[]): CompiledMapping {
  const targets = Object.entries(doc.fields).map(([target, rule]) => ({ target, path: target.split('.'), rule, type: rule.type ?? 'string' }));
  const requiredObjects = requiredObjectsUnder(doc.family, targets.map((t) => t.target)).map((object) => object.split('.'));
  const mapping: CompiledMapping = { document: doc, family: doc.family, targets, requiredObjects, warnings };
  const f = doc.format;
  const common = {
    skipLeadingRows: f.skip_leading_rows ?? 0,
    ...(f.comment_prefix !== undefined && { commentPrefix: f.comment_prefix }),
    nullValues: f.null_values ?? [],
  };
  if (f.kind === 'jsonl') return { ...mapping, jsonl: common };
  return {
    ...mapping,
    csv: {
      delimiter: f.delimiter ?? ',',
      quote: f.quote ?? '"',
      hasHeader: f.has_header ?? true,
      headerPerChunk: f.header_per_chunk ?? false,
      ...(f.columns !== undefined && { columns: f.columns }),
      ...common,
    },
  };
}
