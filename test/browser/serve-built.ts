// The built console web app alone on a loopback port (no API: tests and the bench stub it).
import Fastify, { type FastifyInstance } from 'fastify';
import { ensureConsoleBuilt } from '../../console/web/ensure-built.ts';
import { registerConsoleWeb } from '../../services/console/static.ts';

export async function serveBuiltConsole(extra: (app: FastifyInstance) => void = () => {}): Promise<{ app: FastifyInstance; base: string }> {
  const outcome = await ensureConsoleBuilt();
  if (outcome === 'unavailable') throw new Error('vite is not installed: cannot build the console web app');
  const app = Fastify({ logger: false });
  await registerConsoleWeb(app);
  extra(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { app, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}
