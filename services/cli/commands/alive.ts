// `svc alive <file> [--max-age-s N]`: a worker's liveness probe. Exit 0 when the process's
// heartbeat file (SVC_HEARTBEAT_FILE) was written within N seconds (default 60), 1 when not.
// It reads the file's time only: no database, no engine (heartbeat.ts says why).
import { parseArgs } from 'node:util';
import { heartbeatFresh } from '../heartbeat/heartbeat.ts';
import { UsageError } from '../context.ts';

const USAGE = 'usage: svc alive <heartbeat file> [--max-age-s <seconds>]';

export async function aliveCommand(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { 'max-age-s': { type: 'string', default: '60' } }, allowPositionals: true });
  } catch {
    throw new UsageError(USAGE);
  }
  const [file, ...extra] = parsed.positionals;
  const maxAgeS = Number(parsed.values['max-age-s']);
  if (!file || extra.length > 0 || !Number.isInteger(maxAgeS) || maxAgeS < 1) throw new UsageError(USAGE);
  if (await heartbeatFresh(file, maxAgeS * 1000)) return;
  process.stderr.write(`svc: ${file} was not written in the last ${maxAgeS} s\n`);
  process.exitCode = 1;
}
