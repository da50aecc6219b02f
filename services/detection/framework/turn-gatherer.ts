// Asks gathered until the next turn of the event loop, then answered together by `answer` (one
// answer per ask, in order). A failed call fails every ask of its turn (the batch is retried).
interface Waiting<Ask, Answer> {
  ask: Ask;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

export class TurnGatherer<Ask, Answer> {
  private pending: Array<Waiting<Ask, Answer>> | null = null;

  constructor(private readonly answer: (asks: Ask[]) => Promise<Answer[]>) {}

  get(ask: Ask): Promise<Answer> {
    return new Promise((resolve, reject) => {
      if (!this.pending) {
        const pending: Array<Waiting<Ask, Answer>> = [];
        this.pending = pending;
        setImmediate(() => {
          this.pending = null;
          this.answer(pending.map((p) => p.ask)).then(
            (answers) => pending.forEach((p, i) => p.resolve(answers[i]!)),
            (error: unknown) => pending.forEach((p) => p.reject(error)),
          );
        });
      }
      this.pending.push({ ask, resolve, reject });
    });
  }
}
