import { ConfigError } from '../../platform/config.ts';
import { EngineUnavailableError } from '../../platform/engine-probes.ts';
import { ALL_PARTS, PIPELINES, runParts, type Pipeline } from './commands/run.ts';
import { UsageError } from './context.ts';

// Every other command's code is imported when it runs: a long-running process (`svc up`,
// `svc run …`) does not hold the operator commands in memory, nor they each other.
const admin = () => import('./commands/admin.ts');

const USAGE = `svc: the financial-crime control service

  svc up                                   start everything (API on HOST:PORT, the console on HOST:SVC_CONSOLE_PORT, the pipelines and the webhook worker; embedded PostgreSQL unless DATABASE_URL)
  svc run api                              start the API process alone
  svc run console                          start the analysts' console API (/console/v1) alone, on HOST:SVC_CONSOLE_PORT
  svc run webhooks                         start the webhook delivery worker alone (several copies share the work)
  svc run pipeline canonical               start the canonical pipeline alone (several copies share the work)
  svc run pipeline graph                   start the network graph pipeline alone
  svc run pipeline aggregates              start the behavioural aggregates pipeline alone
  svc run pipeline detect                  start detection alone (alerts, episodes, postures, coverage)
  svc run pipeline imports                 start the import worker alone (lands submitted historical imports)
  svc run pipeline reconcile               start reconciliations alone (compares declared control totals again when movements change)
  svc alive <file> [--max-age-s 60]        exit 0 when a process's heartbeat file (SVC_HEARTBEAT_FILE) is fresh: a worker's liveness probe
  svc status [--json]                      consumer lag per pipeline, live workers, parked records, events by status
  svc deadletters list [--group <group>] [--tenant <tenant_id>] [--status <parked|replay_requested|replayed|discarded>] [--limit <n>] [--json]
                                           records a pipeline could not process and parked, with their error
  svc deadletters replay|discard (--id <id> ... | --group <group> [--tenant <tenant_id>] | --all) [--json]
                                           hand parked records to their pipeline again (after a fix), or give up on them
  svc fx-rates load <FILE>                 load an FX rate file (CSV: base,quote,rate,rate_scale,valid_from), all or nothing
  svc import --mapping <mapping.json> --file <path> [--dry-run] [--go-live <RFC 3339>] [--backfill-from <RFC 3339>]
             [--chunk-bytes <n>] [--url <base URL>] [--key-id <id>] [--key-secret <secret>]
                                           import a historical file through the API with an ingest key (URL and key also from
                                           SVC_URL, SVC_KEY_ID, SVC_KEY_SECRET): uploads it in chunks of whole records (default
                                           3 MiB), submits it and follows its landing; rejects go to <file>.rejects.csv. --dry-run
                                           prints the whole-file dry-run report and cancels. Exit 0 no rejects, 1 rejects, 2 failure
  svc migrate                              apply the PostgreSQL migrations
  svc engines up|down|status [kafka|schema-registry|neo4j|clickhouse …]
                                           the scale-out engines on this machine without Docker, data under SVC_DATA_DIR/engines:
                                           up starts what is not running and prints export lines (eval "$(npx svc engines up)");
                                           down stops what up started (exit 0 each ended on SIGTERM, 3 one had to be killed,
                                           1 one is still running); status says what runs
  svc tenants create <tenant_id> --base-asset <ASSET>
  svc tenants set-rate-limit <tenant_id> --capacity <events> --refill-per-s <events>
  svc keys issue --tenant <tenant_id> --scope <ingest|read|webhook_mgmt|compliance> [--live] [--json]
  svc keys revoke <key_id>
  svc assets add <X-ASSET> --tenant <tenant_id> --scale <0-18>
  svc console-users create --tenant <tenant_id> --email <email> --role <analyst|supervisor>
                                           create an analysts' console user; prints a one-time password once (changed at first login)
  svc console-users list --tenant <tenant_id> [--json]
  svc console-users disable --tenant <tenant_id> --email <email>
                                           disable a console user and end its sessions
  svc console-users unlock --tenant <tenant_id> --email <email>
                                           lift a lock-out after repeated failed logins
  svc cases set --tenant <tenant_id> --episode <epsd_…> [--status <open|investigating|escalated|closed>]
                [--disposition <suspicious_activity_reported|no_further_action|false_positive|inconclusive>] [--note <text>]
                                           set an episode's case (a disposition closes it); prints the episode as JSON
  svc cases show --tenant <tenant_id> --episode <epsd_…>
                                           an episode with its alerts and case history, as JSON
  svc goaml set --tenant <tenant_id> --file <reporting-entity.json>
                                           set the tenant's goAML reporting entity (rentity id, branch, reporting person, FIU codes)
  svc goaml show --tenant <tenant_id>      the tenant's goAML reporting entity, as JSON
  svc rulesets create --tenant <tenant_id> --file <ruleset.json> [--json]
                                           store a ruleset document as the next candidate version (refused with its issues if it does not compile)
  svc rulesets list --tenant <tenant_id> [--json]
  svc rulesets show --tenant <tenant_id> --version <n> [--json]
                                           the document, state and latest backtest of one version
  svc rulesets backtest --tenant <tenant_id> --version <n> --from <RFC 3339> --to <RFC 3339> [--max-changes <n>] [--json]
                                           replay history in (from, to] through a candidate and the live ruleset; counts the alerts
                                           each would have opened (at most --max-changes movements and control events, default 20000)
  svc rulesets shadow --tenant <tenant_id> --version <n> [--json]
                                           run a candidate in shadow beside the live ruleset (its alerts are recorded, never published)
  svc rulesets shadow-report --tenant <tenant_id> --version <n> [--json]
                                           per detector, alerts opened in shadow against live alerts over the same period
  svc rulesets activate --tenant <tenant_id> --version <n> [--json]
                                           make a candidate or the shadow ruleset live (the previous active one retires)
  svc rulesets rollback --tenant <tenant_id> [--json]
                                           back to the previously active ruleset, or the built-in default (0)
  svc models train --tenant <tenant_id> --labels <labels.csv> [--json]
                                           train a learned model from labels (CSV kind,external_id,label[,as_of]) and case dispositions
  svc models list --tenant <tenant_id> [--json]
  svc models show --tenant <tenant_id> --model <id> [--json]
  svc models shadow|activate --tenant <tenant_id> --model <id> [--json]
                                           run a model (default, m1, …) in shadow or live: the live ruleset plus the model`;

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const HELP = new Set(['--help', '-h']);

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // Help asked of any command shows the usage and does nothing else: `svc up --help` started the
  // whole service. (svc import prints its own.)
  if (command !== 'import' && rest.some((arg) => HELP.has(arg))) return print(USAGE);
  // Commands that take nothing more refuse what they would otherwise ignore.
  const only = (allowed: string[]) => {
    const extra = rest.filter((arg) => !allowed.includes(arg));
    if (extra.length > 0) throw new UsageError(`svc ${command} does not take ${extra.join(' ')}\n\n${USAGE}`);
  };
  switch (command) {
    case 'up':
      only([]);
      return runParts(ALL_PARTS);
    case 'run':
      if (rest[0] === 'api' && rest.length === 1) return runParts(['api']);
      if (rest[0] === 'console' && rest.length === 1) return runParts(['console']);
      if (rest[0] === 'webhooks' && rest.length === 1) return runParts(['webhooks']);
      if (rest[0] === 'pipeline' && rest.length === 2 && PIPELINES.includes(rest[1] as Pipeline)) return runParts([`pipeline:${rest[1] as Pipeline}`]);
      throw new UsageError(`usage: svc run api | svc run console | svc run webhooks | svc run pipeline ${PIPELINES.join('|')}`);
    case 'alive':
      return (await import('./commands/alive.ts')).aliveCommand(rest);
    case 'status':
      only(['--json']);
      return (await import('./commands/status.ts')).statusCommand(print, rest.includes('--json'));
    case 'deadletters':
      return (await import('./commands/deadletters.ts')).deadlettersCommand(rest, print);
    case 'fx-rates':
      return (await import('./commands/fx-rates.ts')).fxRatesCommand(rest, print);
    case 'migrate':
      only([]);
      return (await admin()).migrateCommand(print);
    case 'engines':
      return (await import('./commands/engines.ts')).enginesCommand(rest, print);
    case 'tenants':
      return (await admin()).tenantsCommand(rest, print);
    case 'keys':
      return (await admin()).keysCommand(rest, print);
    case 'assets':
      return (await admin()).assetsCommand(rest, print);
    case 'cases':
      return (await import('./commands/cases.ts')).casesCommand(rest, print);
    case 'goaml':
      return (await import('./commands/goaml.ts')).goamlCommand(rest, print);
    case 'console-users':
      return (await import('./commands/console-users.ts')).consoleUsersCommand(rest, print);
    case 'rulesets':
      return (await import('./commands/rulesets.ts')).rulesetsCommand(rest, print);
    case 'models':
      return (await import('./commands/models.ts')).modelsCommand(rest, print);
    case 'import':
      process.exitCode = await (await import('./commands/import.ts')).importCommand(rest, { print, progress: process.stderr, env: process.env });
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      return print(USAGE);
    default:
      throw new UsageError(`unknown command ${command}\n\n${USAGE}`);
  }
}

// node:util's parseArgs refuses an unknown option or a missing value with these: the command was
// used wrongly, as a UsageError says, not a failure to show a stack for.
const ARGUMENT_ERRORS = new Set(['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE', 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL']);

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError || ARGUMENT_ERRORS.has((error as NodeJS.ErrnoException).code ?? '')) {
    process.stderr.write(`svc: ${(error as Error).message}\n`);
    process.exit(2);
  }
  // The message names the variable and says why; a stack would bury it.
  if (error instanceof EngineUnavailableError) {
    process.stderr.write(`svc: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`svc: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
