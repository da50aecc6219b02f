// The clock is injected everywhere time matters so tests can move it.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | string = '2026-09-01T12:00:00Z') {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  set(at: Date | string): void {
    this.ms = new Date(at).getTime();
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}
