import { dateTimeMs, isDateTime } from '../../../schemas/primitives/timestamp.ts';
import type { FieldError } from '../../../schemas/problem.ts';

// Reads query parameters one by one, collecting every problem (path = the parameter's name) so a
// caller gets them all in one 400 rather than one per attempt.
export class QueryReader {
  readonly errors: FieldError[] = [];

  constructor(private readonly query: Record<string, unknown>) {}

  private bad(name: string, message: string): undefined {
    this.errors.push({ path: name, code: 'svc:request/invalid_parameter', message });
    return undefined;
  }

  // The raw value; a parameter given twice is refused rather than one of them picked.
  text(name: string, options: { required?: boolean; max?: number } = {}): string | undefined {
    const value = this.query[name];
    if (value === undefined || value === '') return options.required ? this.bad(name, 'is required') : undefined;
    if (typeof value !== 'string') return this.bad(name, 'must be given once');
    if (value.length > (options.max ?? 256)) return this.bad(name, `must be at most ${options.max ?? 256} characters`);
    if (value.includes('\0')) return this.bad(name, 'must not contain the character U+0000');
    return value;
  }

  integer(name: string, range: { min: number; max: number; fallback: number }): number {
    const value = this.text(name);
    if (value === undefined) return range.fallback;
    if (!/^[0-9]{1,9}$/.test(value) || Number(value) < range.min || Number(value) > range.max) {
      this.bad(name, `must be an integer ${range.min}-${range.max}`);
      return range.fallback;
    }
    return Number(value);
  }

  dateTime(name: string): Date | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!isDateTime(value)) return this.bad(name, 'must be an RFC 3339 date-time with an offset');
    return new Date(dateTimeMs(value));
  }

  // Integer minor units, as in every money value of the API.
  minorUnits(name: string): bigint | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!/^(0|[1-9][0-9]{0,37})$/.test(value)) return this.bad(name, 'must be a non-negative integer amount in minor units');
    return BigInt(value);
  }

  // A comma-separated list of allowed words, without repeats.
  list<T extends string>(name: string, allowed: readonly T[]): T[] | undefined {
    const value = this.text(name, { max: 1024 });
    if (value === undefined) return undefined;
    const items = value.split(',');
    const unknown = items.filter((item) => !allowed.includes(item as T));
    if (unknown.length > 0) return this.bad(name, `unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
    return [...new Set(items)] as T[];
  }

  window(since: string, until: string): { since?: Date; until?: Date } {
    const from = this.dateTime(since);
    const to = this.dateTime(until);
    if (from && to && from > to) this.bad(since, `must not be after ${until}`);
    return { since: from, until: to };
  }
}
