import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, portTaken } from './prerequisites.ts';

describe('an engine port', () => {
  it('is free on 127.0.0.1 and below the ephemeral range, which outgoing connections draw from', async () => {
    const low = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/)[0]);
    for (let i = 0; i < 10; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(low);
      expect(await portTaken(port)).toBe(false);
    }
  });

  it('is seen as taken while something listens on it', async () => {
    const server = createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    try {
      expect(await portTaken(port)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
