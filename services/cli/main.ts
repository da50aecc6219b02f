import { ConfigError } from '../../platform/config.ts';
import { assetsCommand, keysCommand, migrateCommand, tenantsCommand } from './commands/admin.ts';
import { up } from './commands/up.ts';
import { UsageError } from './context.ts';

const USAGE = `svc: the financial-crime control service

  svc up                                   start everything (API on HOST:PORT, embedded PostgreSQL unless DATABASE_URL)
  svc run api                              start the API process alone
  svc migrate                              apply the PostgreSQL migrations
  svc tenants create <tenant_id> --base-asset <ASSET>
  svc tenants set-rate-limit <tenant_id> --capacity <events> --refill-per-s <events>
  svc keys issue --tenant <tenant_id> --scope <ingest|read|webhook_mgmt> [--live] [--json]
  svc keys revoke <key_id>
  svc assets add <X-ASSET> --tenant <tenant_id> --scale <0-18>`;

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up':
      return up();
    case 'run':
      if (rest[0] === 'api') return up();
      throw new UsageError('usage: svc run api');
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
