import { createSocket } from 'node:dgram';
import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DESTINATION_REFUSED,
  checkDestination,
  classifyAddress,
  guardedLookup,
  literalHostRefusal,
  resolveWith,
  type DestinationPolicy,
  type Resolve,
} from './destination.ts';

// Stands in for DNS: tests never resolve a real name (the default resolver's own tests ask local
// servers that refuse or never answer).
const ZONE: Record<string, Array<{ address: string; family: 4 | 6 }>> = {
  'localhost': [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ],
  'public.example': [{ address: '8.8.8.8', family: 4 }],
  'dual.example': [
    { address: '8.8.8.8', family: 4 },
    { address: '2001:4860:4860::8888', family: 6 },
  ],
  'mixed.example': [
    { address: '93.184.215.14', family: 4 },
    { address: '10.0.0.5', family: 4 },
  ],
  'split.example': [
    { address: '8.8.8.8', family: 4 },
    { address: 'fd00::1', family: 6 },
  ],
  'v6-only.example': [{ address: '2606:4700:4700::1111', family: 6 }],
  'ula.example': [{ address: 'fd12:3456::1', family: 6 }],
  'mapped.example': [{ address: '::ffff:169.254.169.254', family: 6 }],
  'weird.example': [{ address: 'not-an-ip', family: 4 }],
  'empty.example': [],
};

const resolve: Resolve = async (hostname) => {
  const found = ZONE[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

const strict: DestinationPolicy = { allowPrivateNetworks: false, resolve };
const testMode: DestinationPolicy = { allowPrivateNetworks: true, resolve };

const notPublic = (reason: string) => `address is not public (${reason})`;
const nameRefused = 'host does not resolve to a public address';

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'this-network'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'shared (carrier-grade NAT)'],
    ['100.127.255.255', 'shared (carrier-grade NAT)'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.9', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.0.1', 'private'],
    ['198.18.0.0', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback'],
    ['::ffff:127.0.0.1', 'ipv4-mapped loopback'],
    ['::ffff:7f00:1', 'ipv4-mapped loopback'],
    ['::FFFF:7F00:0001', 'ipv4-mapped loopback'],
    ['0:0:0:0:0:ffff:127.0.0.1', 'ipv4-mapped loopback'],
    ['::ffff:10.1.2.3', 'ipv4-mapped private'],
    ['::ffff:169.254.169.254', 'ipv4-mapped link-local'],
    ['::ffff:8.8.8.8', 'ipv4-mapped'],
    ['::ffff:0:7f00:1', 'reserved'],
    ['::7f00:1', 'ipv4-compatible loopback'],
    ['::8.8.8.8', 'ipv4-compatible'],
    ['64:ff9b::127.0.0.1', 'NAT64 loopback'],
    ['64:ff9b::808:808', 'NAT64'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['100::1', 'discard-only'],
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'IETF protocol assignment'],
    ['2001:1ff:ffff::1', 'IETF protocol assignment'],
    ['2001:db8::1', 'documentation'],
    ['2001:DB8:0:0:0:0:0:1', 'documentation'],
    ['2002:7f00:1::1', '6to4'],
    ['3fff::1', 'documentation'],
    ['3fff:fff:ffff::1', 'documentation'],
    ['5f00::1', 'segment routing'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['FF0E::1', 'multicast'],
    ['1::', 'reserved'],
    ['4000::1', 'reserved'],
    ['e000::1', 'reserved'],
    ['2001:4860:4860::8888%eth0', 'scoped'],
    ['localhost', 'not an IP address'],
    ['2130706433', 'not an IP address'],
    ['0x7f.1', 'not an IP address'],
    ['127.1', 'not an IP address'],
    ['[::1]', 'not an IP address'],
    ['', 'not an IP address'],
  ])('%s is not public: %s', (ip, reason) => {
    expect(classifyAddress(ip)).toEqual({ public: false, reason });
  });

  it.each([
    '8.8.8.8',
    '93.184.215.14',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.0.3.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2001:200::1',
    '2620:4f:8000::1',
    '2A00:1450:4001:80B::200E',
    '3ffe:ffff::1',
  ])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toEqual({ public: true });
  });
});

describe('numeric IPv4 forms', () => {
  // The policy relies on WHATWG parsing to normalise these; pin that down.
  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://10.1/', '10.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['https://[0:0:0:0:0:FFFF:7F00:1]/', '[::ffff:7f00:1]'],
  ])('%s has hostname %s', (text, hostname) => {
    expect(new URL(text).hostname).toBe(hostname);
  });
});

describe('checkDestination refuses', () => {
  const spaceOrControl = 'must not contain spaces or control characters';
  const long = `https://public.example/${'a'.repeat(2049 - 'https://public.example/'.length)}`;

  it.each([
    // IPv4 special-purpose blocks
    ['https://0.0.0.0/', notPublic('unspecified')],
    ['https://0.1.2.3/', notPublic('this-network')],
    ['https://10.1.2.3/', notPublic('private')],
    ['https://100.64.0.1/', notPublic('shared (carrier-grade NAT)')],
    ['https://127.0.0.1/', notPublic('loopback')],
    ['https://127.255.255.254:8443/hook', notPublic('loopback')],
    ['https://169.254.169.254/latest/meta-data/', notPublic('link-local')],
    ['https://172.16.0.1/', notPublic('private')],
    ['https://172.31.255.255/', notPublic('private')],
    ['https://192.0.0.1/', notPublic('IETF protocol assignment')],
    ['https://192.0.2.1/', notPublic('documentation')],
    ['https://192.88.99.1/', notPublic('6to4 relay anycast')],
    ['https://192.168.1.1/', notPublic('private')],
    ['https://198.18.0.1/', notPublic('benchmarking')],
    ['https://198.51.100.7/', notPublic('documentation')],
    ['https://203.0.113.9/', notPublic('documentation')],
    ['https://224.0.0.1/', notPublic('multicast')],
    ['https://240.0.0.1/', notPublic('reserved')],
    ['https://255.255.255.255/', notPublic('broadcast')],
    // numeric IPv4 forms
    ['https://2130706433/', notPublic('loopback')],
    ['https://0x7f.1/', notPublic('loopback')],
    ['https://0x7f000001/', notPublic('loopback')],
    ['https://017700000001/', notPublic('loopback')],
    ['https://127.1/', notPublic('loopback')],
    ['https://10.1/', notPublic('private')],
    ['https://0/', notPublic('unspecified')],
    // IPv6
    ['https://[::]/', notPublic('unspecified')],
    ['https://[::1]/', notPublic('loopback')],
    ['https://[0:0:0:0:0:0:0:1]:8443/', notPublic('loopback')],
    ['https://[::ffff:127.0.0.1]/', notPublic('ipv4-mapped loopback')],
    ['https://[::ffff:7f00:1]/', notPublic('ipv4-mapped loopback')],
    ['https://[::FFFF:10.0.0.1]/', notPublic('ipv4-mapped private')],
    ['https://[::ffff:8.8.8.8]/', notPublic('ipv4-mapped')],
    ['https://[::127.0.0.1]/', notPublic('ipv4-compatible loopback')],
    ['https://[64:ff9b::127.0.0.1]/', notPublic('NAT64 loopback')],
    ['https://[64:ff9b::8.8.8.8]/', notPublic('NAT64')],
    ['https://[64:ff9b:1::1]/', notPublic('local-use NAT64')],
    ['https://[100::1]/', notPublic('discard-only')],
    ['https://[2001::1]/', notPublic('Teredo')],
    ['https://[2001:2::1]/', notPublic('benchmarking')],
    ['https://[2001:10::1]/', notPublic('IETF protocol assignment')],
    ['https://[2001:db8::1]/', notPublic('documentation')],
    ['https://[2002:7f00:1::1]/', notPublic('6to4')],
    ['https://[3fff::1]/', notPublic('documentation')],
    ['https://[fc00::1]/', notPublic('unique-local')],
    ['https://[fd12:3456::1]/', notPublic('unique-local')],
    ['https://[fe80::1]/', notPublic('link-local')],
    ['https://[fec0::1]/', notPublic('site-local')],
    ['https://[ff02::1]/', notPublic('multicast')],
    ['https://[4000::1]/', notPublic('reserved')],
    // names, through the fake resolver: one answer whatever the resolver said (no map of the
    // service's own names)
    ['https://localhost/', nameRefused],
    ['https://localhost:8443/hook', nameRefused],
    ['https://mixed.example/', nameRefused],
    ['https://split.example/', nameRefused],
    ['https://ula.example/', nameRefused],
    ['https://mapped.example/', nameRefused],
    ['https://weird.example/', nameRefused],
    ['https://nowhere.example/', nameRefused],
    ['https://empty.example/', nameRefused],
    // form
    ['http://public.example/', 'must use https'],
    ['http://127.0.0.1/', 'must use https'],
    ['ftp://public.example/', 'must use https'],
    ['javascript:alert(1)', 'must use https'],
    ['wss://public.example/', 'must use https'],
    ['https://user:hunter2@public.example/', 'must not contain a user name or password'],
    ['https://user@public.example/', 'must not contain a user name or password'],
    ['https://:hunter2@public.example/', 'must not contain a user name or password'],
    ['https://public.example/hook#section', 'must not contain a fragment'],
    ['https://public.example/hook#', 'must not contain a fragment'],
    ['not a url', 'must be an absolute URL'],
    ['', 'must be an absolute URL'],
    ['https://', 'must be an absolute URL'],
    ['https://:8443/', 'must be an absolute URL'],
    ['//public.example/hook', 'must be an absolute URL'],
    ['https://[::1/', 'must be an absolute URL'],
    ['https://1.2.3.256/', 'must be an absolute URL'],
    [long, 'must be at most 2048 characters'],
    // text that parsing would change silently (dropped or encoded): stored, it would not be the
    // URL delivered to
    [' https://public.example/hook', spaceOrControl],
    ['https://public.example/hook ', spaceOrControl],
    ['https://public.example/hook\n', spaceOrControl],
    ['https://public.example/a\tb', spaceOrControl],
    ['https://public.example/a\r\nb', spaceOrControl],
    ['https://public.example/a b', spaceOrControl],
    ['https://public.example/a\u0000b', spaceOrControl],
    ['https://public.example/\u007f', spaceOrControl],
    ['https://public.example/\u00a0', spaceOrControl],
    ['https://public.example/\u2028', spaceOrControl],
    ['https://public.example/\ufeff', spaceOrControl],
  ])('%j: %s', async (text, message) => {
    const result = await checkDestination(text, strict);
    expect(result).toEqual({ ok: false, message });
  });

  it('never quotes the URL back', async () => {
    const texts = [
      'https://user:s3cr3t-pass@public.example/hook',
      'https://localhost/hook?token=s3cr3t-token',
      'https://169.254.169.254/s3cr3t-path',
      'https://nowhere.example/s3cr3t',
      'http://public.example/s3cr3t',
      'https://public.example/#s3cr3t',
      `https://public.example/s3cr3t${'x'.repeat(2048)}`,
    ];
    for (const text of texts) {
      const result = await checkDestination(text, strict);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.message).not.toMatch(/s3cr3t|example|localhost|169\.254/);
    }
  });
});

describe('checkDestination accepts', () => {
  it.each([
    ['https://93.184.215.14/', 'https://93.184.215.14/'],
    ['https://8.8.8.8:8443/hook?x=1', 'https://8.8.8.8:8443/hook?x=1'],
    ['https://100.63.255.255/', 'https://100.63.255.255/'],
    ['https://172.32.0.1/', 'https://172.32.0.1/'],
    ['https://[2606:4700:4700::1111]/hook', 'https://[2606:4700:4700::1111]/hook'],
    ['https://[2001:4860:4860:0:0:0:0:8888]:443/', 'https://[2001:4860:4860::8888]/'],
    ['https://[2620:4f:8000::1]/', 'https://[2620:4f:8000::1]/'],
    ['https://public.example/hooks/abc?token=1', 'https://public.example/hooks/abc?token=1'],
    ['HTTPS://PUBLIC.EXAMPLE/Hook', 'https://public.example/Hook'],
    ['https://dual.example/', 'https://dual.example/'],
    ['https://v6-only.example/', 'https://v6-only.example/'],
  ])('%s', async (text, href) => {
    const result = await checkDestination(text, strict);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.url.href).toBe(href);
  });

  it('a URL of exactly 2048 characters', async () => {
    const text = `https://public.example/${'a'.repeat(2048 - 'https://public.example/'.length)}`;
    expect(text).toHaveLength(2048);
    expect((await checkDestination(text, strict)).ok).toBe(true);
  });
});

describe('allowPrivateNetworks', () => {
  it.each([
    ['https://127.0.0.1:8443/', 'https://127.0.0.1:8443/'],
    ['https://[::1]:8443/hook', 'https://[::1]:8443/hook'],
    ['https://2130706433/', 'https://127.0.0.1/'],
    ['https://10.0.0.5/', 'https://10.0.0.5/'],
    ['https://localhost/', 'https://localhost/'],
    ['https://mixed.example/', 'https://mixed.example/'],
  ])('lets %s through', async (text, href) => {
    const result = await checkDestination(text, testMode);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.url.href).toBe(href);
  });

  it.each([
    ['http://127.0.0.1/', 'must use https'],
    ['https://user:pass@127.0.0.1/', 'must not contain a user name or password'],
    ['https://127.0.0.1/#x', 'must not contain a fragment'],
    ['https://nowhere.example/', nameRefused],
    ['https://weird.example/', nameRefused],
  ])('still refuses %s', async (text, message) => {
    expect(await checkDestination(text, testMode)).toEqual({ ok: false, message });
  });
});

describe('literalHostRefusal', () => {
  it.each([
    ['127.0.0.1', notPublic('loopback')],
    ['[::1]', notPublic('loopback')],
    ['::1', notPublic('loopback')],
    ['[::ffff:7f00:1]', notPublic('ipv4-mapped loopback')],
    ['10.0.0.1', notPublic('private')],
  ])('%s: %s', (hostname, message) => {
    expect(literalHostRefusal(hostname, strict)).toBe(message);
    expect(literalHostRefusal(hostname, testMode)).toBeUndefined();
  });

  it.each(['8.8.8.8', '[2606:4700:4700::1111]', 'localhost', 'public.example'])('%s is not refused', (hostname) => {
    expect(literalHostRefusal(hostname, strict)).toBeUndefined();
  });
});

type LookupResult = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };

function lookup(policy: DestinationPolicy, hostname: string, options: LookupOptions): Promise<LookupResult> {
  return new Promise((done) => {
    guardedLookup(policy)(hostname, options, (error, address, family) => done({ error, address, family }));
  });
}

describe('guardedLookup', () => {
  it('answers the all: true shape with every address', async () => {
    const { error, address } = await lookup(strict, 'dual.example', { all: true });
    expect(error).toBeNull();
    expect(address).toEqual([
      { address: '8.8.8.8', family: 4 },
      { address: '2001:4860:4860::8888', family: 6 },
    ]);
  });

  it('answers the single-address shape with the first address', async () => {
    expect(await lookup(strict, 'dual.example', {})).toEqual({ error: null, address: '8.8.8.8', family: 4 });
  });

  it('honours options.family', async () => {
    expect(await lookup(strict, 'dual.example', { family: 6 })).toEqual({
      error: null,
      address: '2001:4860:4860::8888',
      family: 6,
    });
    expect((await lookup(strict, 'dual.example', { family: 'IPv6', all: true })).address).toEqual([
      { address: '2001:4860:4860::8888', family: 6 },
    ]);
    const { error } = await lookup(strict, 'v6-only.example', { family: 4 });
    expect(error?.code).toBe('ENOTFOUND');
  });

  it('refuses when any address is not public, even one the family filter would drop', async () => {
    for (const options of [{}, { all: true }, { family: 4 }]) {
      const { error } = await lookup(strict, 'split.example', options);
      expect(error?.code).toBe(DESTINATION_REFUSED);
      expect(error?.message).toBe('host resolves to an address that is not public (unique-local)');
    }
  });

  it('refuses a name resolving to loopback, unless private networks are allowed', async () => {
    expect((await lookup(strict, 'localhost', { all: true })).error?.code).toBe(DESTINATION_REFUSED);
    expect(await lookup(testMode, 'localhost', {})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
  });

  it('reports a name that does not resolve as ENOTFOUND, not as a refusal', async () => {
    for (const hostname of ['nowhere.example', 'empty.example']) {
      const { error } = await lookup(strict, hostname, {});
      expect(error?.code).toBe('ENOTFOUND');
      expect(error?.message).toBe('host does not resolve');
    }
  });

  it('judges a literal itself instead of asking the resolver', async () => {
    const policy: DestinationPolicy = {
      allowPrivateNetworks: false,
      resolve: async () => [{ address: '8.8.8.8', family: 4 }],
    };
    expect((await lookup(policy, '127.0.0.1', {})).error?.code).toBe(DESTINATION_REFUSED);
  });
});

describe('guardedLookup on a real connection', () => {
  let server: net.Server;
  let port: number;
  let accepted = 0;

  beforeAll(async () => {
    server = net.createServer((socket) => {
      accepted += 1;
      socket.on('error', () => {});
      socket.end();
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((closed) => server.close(() => closed()));
  });

  // Records the options Node passes, to show which call shape was exercised.
  function connect(policy: DestinationPolicy, autoSelectFamily: boolean) {
    const calls: LookupOptions[] = [];
    const guarded = guardedLookup(policy);
    const spy: net.LookupFunction = (hostname, options, callback) => {
      calls.push(options);
      guarded(hostname, options, callback);
    };
    return new Promise<{ connected: boolean; code: string | undefined; calls: LookupOptions[] }>((done) => {
      const socket = net.connect({ host: 'localhost', port, lookup: spy, autoSelectFamily });
      socket.on('connect', () => {
        socket.destroy();
        done({ connected: true, code: undefined, calls });
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        socket.destroy();
        done({ connected: false, code: error.code, calls });
      });
    });
  }

  const loopbackOnly: Resolve = async () => [{ address: '127.0.0.1', family: 4 }];
  const loopbackBoth: Resolve = async () => [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ];

  it.each([false, true])('refuses the connection (autoSelectFamily %s)', async (autoSelectFamily) => {
    const before = accepted;
    const result = await connect({ allowPrivateNetworks: false, resolve: loopbackBoth }, autoSelectFamily);
    expect(result.connected).toBe(false);
    expect(result.code).toBe(DESTINATION_REFUSED);
    expect(result.calls.map((o) => o.all === true)).toEqual([autoSelectFamily]);
    expect(accepted).toBe(before);
  });

  it.each([
    [false, loopbackOnly],
    [true, loopbackOnly],
    [true, loopbackBoth],
  ])('connects with allowPrivateNetworks (autoSelectFamily %s)', async (autoSelectFamily, fake) => {
    const result = await connect({ allowPrivateNetworks: true, resolve: fake }, autoSelectFamily);
    expect(result).toMatchObject({ connected: true, code: undefined });
    expect(result.calls.map((o) => o.all === true)).toEqual([autoSelectFamily]);
  });
});

describe('the default resolver (resolveWith)', () => {
  // A UDP port that takes queries and never answers: a name server that hangs.
  const silentServer = async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return { address: `127.0.0.1:${socket.address().port}`, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
  };

  it('gives up on a name server that never answers without holding a thread the system resolver needs', async () => {
    const silent = await silentServer();
    try {
      const resolver = new dnsPromises.Resolver({ timeout: 300, tries: 1 });
      resolver.setServers([silent.address]);
      const resolve = resolveWith(resolver);
      const settled: string[] = [];
      // Eight names whose server hangs: more than libuv's four threads.
      const slow = Array.from({ length: 8 }, (_, i) =>
        resolve(`h${i}.slow.example`).then(
          () => settled.push('slow answered'),
          (error: NodeJS.ErrnoException) => settled.push(`slow ${error.code}`),
        ),
      );
      // A lookup on the system's threads meanwhile (the hosts file) is not queued behind them.
      const local = dnsPromises.lookup('localhost').then(() => settled.push('localhost'));
      await Promise.all([...slow, local]);
      expect(settled[0]).toBe('localhost');
      expect(settled.slice(1)).toEqual(Array.from({ length: 8 }, () => 'slow ETIMEOUT'));
    } finally {
      await silent.close();
    }
  });

  it('looks a name up through the system (the hosts file) when DNS has no answer for it', async () => {
    const resolver = new dnsPromises.Resolver({ timeout: 300, tries: 1 });
    // Nothing listens there: refused at once.
    resolver.setServers(['127.0.0.1:9']);
    const found = await resolveWith(resolver)('localhost');
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((a) => a.address === '127.0.0.1' || a.address === '::1')).toBe(true);
  });
});
