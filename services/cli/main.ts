import { ConfigError } from '../../platform/config.ts';
import { assetsCommand, keysCommand, migrateCommand, tenantsCommand } from './commands/admin.ts';
import { ALL_PARTS, PIPELINES, runParts, type Pipeline } from './commands/run.ts';
import { statusCommand } from './commands/status.ts';
import { fxRatesCommand } from './commands/fx-rates.ts';
import { UsageError } from './context.ts';

const USAGE = `svc: the financial-crime control service

  svc up                                   start everything (API on HOST:PORT and the pipelines; embedded PostgreSQL unless DATABASE_URL)
  svc run api                              start the API process alone
  svc run pipeline canonical               start the canonical pipeline alone (several copies share the work)
  svc run pipeline graph                   start the network graph pipeline alone
  svc run pipeline aggregates              start the behavioural aggregates pipeline alone
  svc status [--json]                      consumer lag per pipeline, live workers, events by status
  svc fx-rates load <FILE>                 load an FX rate file (CSV: base,quote,rate,rate_scale,valid_from), all or nothing
  svc migrate                              apply the PostgreSQL migrations
  svc tenants create <tenant_id> --base-asset <ASSET>
  svc tenants set-rate-limit <tenant_id> --capacity <events> --refill-per-s <events>
  svc keys issue --tenant <tenant_id> --scope <ingest|read|webhook_mgmt|compliance> [--live] [--json]
  svc keys revoke <key_id>
  svc assets add <X-ASSET> --tenant <tenant_id> --scale <0-18>`;

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up':
      return runParts(ALL_PARTS);
    case 'run':
      if (rest[0] === 'api') return runParts(['api']);
      if (rest[0] === 'pipeline' && rest.length === 2 && PIPELINES.includes(rest[1] as Pipeline)) return runParts([`pipeline:${rest[1] as Pipeline}`]);
      throw new UsageError(`usage: svc run api | svc run pipeline ${PIPELINES.join('|')}`);
    case 'status':
      return statusCommand(print, rest.includes('--json'));
    case 'fx-rates':
      return fxRatesCommand(rest, print);
    case 'migrate':
      return migrateCommand(print);
    case 'tenants':
      return tenantsCommand(rest, print);
    case 'keys':
      return keysCommand(rest, print);
    case 'assets':
      return assetsCommand(rest, print);
    case undefined:
    case 'help':
    case '--help':
      return print(USAGE);
    default:
      throw new UsageError(`unknown command ${command}\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError) {
    process.stderr.write(`svc: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`svc: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
