import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { parseId } from '../../../platform/ids.ts';
import { applyCaseAction } from '../../cases/actions.ts';
import { CASE_STATUSES, DISPOSITIONS } from '../../../schemas/responses.ts';
import { loadEpisodeDetail } from '../../cases/render.ts';
import { UsageError, withContext } from '../context.ts';

const USAGE = `usage: svc cases set --tenant <tenant_id> --episode <epsd_…> [--status <${CASE_STATUSES.join('|')}>] [--disposition <${DISPOSITIONS.join('|')}>] [--note <text>]
       svc cases show --tenant <tenant_id> --episode <epsd_…>`;

// The operator's side of case actions, under the same rules as POST /v1/episodes/{id}/case; the
// actor recorded is cli:<os user>. Both print the episode as the API shows it.
export async function casesCommand(args: string[], print: (line: string) => void): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, episode: { type: 'string' }, status: { type: 'string' }, disposition: { type: 'string' }, note: { type: 'string' } },
  });
  const [action] = positionals;
  const tenantId = values.tenant;
  const episodeId = values.episode === undefined ? undefined : parseId('episode', values.episode);
  if ((action !== 'set' && action !== 'show') || positionals.length !== 1 || !tenantId || !values.episode) throw new UsageError(USAGE);
  if (!episodeId) throw new UsageError(`${values.episode} is not an episode id (epsd_<uuid>)`);
  if (action === 'show' && (values.status ?? values.disposition ?? values.note) !== undefined) throw new UsageError(USAGE);

  await withContext(async ({ db }) => {
    if (action === 'set') {
      const outcome = await applyCaseAction(
        db.pool,
        { tenantId, episodeId, status: values.status, disposition: values.disposition, note: values.note, actor: `cli:${osUser()}` },
        new Date(),
      );
      if (outcome.kind === 'invalid') throw new UsageError(`case action refused:\n${outcome.errors.map((e) => `  --${e.path}: ${e.message}`).join('\n')}`);
      if (outcome.kind === 'not_found') throw new UsageError(`no episode ${values.episode} in tenant ${tenantId}`);
      if (outcome.kind === 'refused') throw new UsageError(`case action refused: ${outcome.detail}`);
    }
    const episode = await loadEpisodeDetail(db.pool, tenantId, episodeId);
    if (!episode) throw new UsageError(`no episode ${values.episode} in tenant ${tenantId}`);
    print(JSON.stringify(episode, null, 2));
  });
}

// userInfo throws for a uid without a passwd entry (some containers).
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}
