// One lane of work, run one group at a time: items submitted while a group runs wait and go
// together in the next one, a single run for all of them (a group commit: one transaction, one
// set of statements and one WAL flush for many callers). Each submitter is answered when the
// group holding its item has run. Should a group of several fail, its items are run again one by
// one, so an item that cannot run fails alone and the others are not held hostage by it.
interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupLane<T> {
  private queue: Array<Waiting<T>> = [];
  private running = false;

  // runGroup: runs the items as one; weight and maxWeight bound a group (the first item of a
  // group is always taken, whatever its weight).
  constructor(
    private readonly runGroup: (items: T[]) => Promise<void>,
    private readonly options: { weight?: (item: T) => number; maxWeight?: number } = {},
  ) {}

  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) await this.runNext(this.takeGroup());
    } finally {
      this.running = false;
    }
  }

  private takeGroup(): Array<Waiting<T>> {
    const weight = this.options.weight ?? (() => 1);
    const max = this.options.maxWeight ?? Number.POSITIVE_INFINITY;
    const group: Array<Waiting<T>> = [];
    let total = 0;
    while (this.queue.length > 0 && (group.length === 0 || total + weight(this.queue[0]!.item) <= max)) {
      const next = this.queue.shift()!;
      group.push(next);
      total += weight(next.item);
    }
    return group;
  }

  private async runNext(group: Array<Waiting<T>>): Promise<void> {
    try {
      await this.runGroup(group.map((w) => w.item));
      for (const waiting of group) waiting.resolve();
      return;
    } catch (error) {
      if (group.length === 1) {
        group[0]!.reject(error);
        return;
      }
    }
    for (const waiting of group) {
      try {
        await this.runGroup([waiting.item]);
        waiting.resolve();
      } catch (error) {
        waiting.reject(error);
      }
    }
  }
}
