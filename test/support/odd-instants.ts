import fc from 'fast-check';

// Date-times for generated queries: one instant written at offsets RFC 3339 allows and PostgreSQL
// refuses as text (past ±15:59), a leap second, the ends of the years RFC 3339 can write, and a
// few that are not valid at all. The instant is one the test's world holds data around.
export function oddInstants(at: string): fc.Arbitrary<string> {
  const ms = Date.parse(at);
  const written = (offsetMinutes: number) => {
    const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
    const size = Math.abs(offsetMinutes);
    const hhmm = `${String(Math.floor(size / 60)).padStart(2, '0')}:${String(size % 60).padStart(2, '0')}`;
    return `${local}${offsetMinutes < 0 ? '-' : '+'}${hhmm}`;
  };
  return fc.constantFrom(
    written(23 * 60 + 59), written(-16 * 60), written(20 * 60 + 30), written(-20 * 60),
    '2016-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59', '2026-09-01T12:00:00.123456789Z', '2026-13-01T00:00:00Z',
  );
}
