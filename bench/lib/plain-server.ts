// The baseline of bench/validate: a plain, unsigned Fastify route that parses the JSON body and
// returns it. Run as its own process (node --import tsx bench/lib/plain-server.ts) with HOST and
// PORT (0 picks a free port); prints "plain is up at http://HOST:PORT" once listening and stops
// on SIGINT or SIGTERM.
import Fastify from 'fastify';

const host = process.env.HOST || '127.0.0.1';
const port = Number(process.env.PORT || 0);

const app = Fastify({ logger: false });
app.post('/echo', async (request) => request.body);

await app.listen({ host, port });
const address = app.server.address();
const actualPort = typeof address === 'object' && address ? address.port : port;
process.stdout.write(`plain is up at http://${host}:${actualPort}\n`);

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await app.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
