import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { loadRateFile } from '../../../platform/fx/rate-files.ts';
import { UsageError, withContext } from '../context.ts';

export async function fxRatesCommand(args: string[], print: (line: string) => void): Promise<void> {
  const [action, file] = args;
  if (action !== 'load' || !file) throw new UsageError('usage: svc fx-rates load <FILE>');
  const text = await readFile(file, 'utf8');
  await withContext(async ({ db }) => {
    const outcome = await loadRateFile(db.pool, basename(file), text, new Date());
    if (outcome.kind === 'refused') {
      throw new UsageError(`${file} refused, nothing loaded:\n${outcome.errors.map((e) => `  line ${e.line}: ${e.message}`).join('\n')}`);
    }
    print(`${file}: ${outcome.rows} rates loaded as file ${outcome.fileId}`);
  });
}
