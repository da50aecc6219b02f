// The values a read's activity rows repeat, shared among them instead of held once per row.
// The driver parses a new Date and new strings for every row, and a movement's legs (the two
// accounts and two parties, each in and out) repeat its instant, id and amount; counterparties,
// assets and countries recur across movements. The detect process keeps these rows for many
// batches (snapshot-cache.ts), where a Date alone (about 90 bytes in V8) outweighed the row's
// own fields, and the row copies were most of the process's live heap.
//
// Only equal values are shared, and rows are never written to after they are built, so a
// shared value reads exactly as a copy would. One instance per read: it is dropped with the
// read's rows, so it needs no bound of its own.
import type { ActivityRecord } from './port.ts';

type Amount = ActivityRecord['amount'];

export class SharedValues {
  private readonly instants = new Map<number, Date>();
  private readonly texts = new Map<string, string>();
  // Per movement id, the last amount built for it (its legs carry the same amount).
  private readonly amounts = new Map<string, Amount>();

  instant(value: Date): Date {
    const time = value.getTime();
    const found = this.instants.get(time);
    if (found) return found;
    this.instants.set(time, value);
    return value;
  }

  text(value: string): string;
  text(value: string | null): string | null;
  text(value: string | null): string | null {
    if (value === null) return null;
    const found = this.texts.get(value);
    if (found !== undefined) return found;
    this.texts.set(value, value);
    return value;
  }

  // The amount of a movement's leg: the one built for another leg when equal, else a new one.
  amount(movementId: string, value: bigint, scale: number, asset: string): Amount {
    const found = this.amounts.get(movementId);
    if (found && found.value === value && found.scale === scale && found.asset === asset) return found;
    const amount = { value, scale, asset };
    this.amounts.set(movementId, amount);
    return amount;
  }
}
