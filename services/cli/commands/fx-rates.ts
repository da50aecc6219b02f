import { parseArgs } from 'node:util';
import { basename } from 'node:path';
import { loadRateFile } from '../../../platform/fx/rate-files.ts';
import { UsageError, withContext } from '../context.ts';
import { readTextFile } from '../files.ts';

export async function fxRatesCommand(args: string[], print: (line: string) => void): Promise<void> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [action, file] = positionals;
  if (action !== 'load' || !file || positionals.length !== 2) throw new UsageError('usage: svc fx-rates load <FILE>');
  const text = await readTextFile(file);
  await withContext(async ({ db }) => {
    const outcome = await loadRateFile(db.pool, basename(file), text, new Date());
    if (outcome.kind === 'refused') {
      throw new UsageError(`${file} refused, nothing loaded:\n${outcome.errors.map((e) => `  line ${e.line}: ${e.message}`).join('\n')}`);
    }
    print(`${file}: ${outcome.rows} rates loaded as file ${outcome.fileId}`);
  });
}
