import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

// Which webhook destination URLs the service may deliver to. Checked when an endpoint is
// registered and again on every connect (through `guardedLookup`), because a name that resolved
// to a public address at registration can later resolve to a private one (DNS rebinding).
//
// The address rule is an allow-list in spirit: IPv4 is accepted unless it falls in an IANA
// special-purpose block that is not globally reachable; IPv6 must be global unicast (2000::/3)
// and outside that range's special blocks. Everything else is refused.

export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export type AddressVerdict = { public: true } | { public: false; reason: string };

export interface DestinationPolicy {
  // Operator test mode: deliver to loopback/private receivers. Scheme and userinfo rules still hold.
  allowPrivateNetworks: boolean;
  resolve?: Resolve;
}

export type DestinationCheck = { ok: true; url: URL } | { ok: false; message: string };

export const DESTINATION_REFUSED = 'ESVC_DESTINATION_REFUSED';
const MAX_DESTINATION_LENGTH = 2048;
// ASCII space and C0 controls, DEL, and the Unicode spaces and separators.
const SPACE_OR_CONTROL = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/u;

type Block = { bytes: Uint8Array; bits: number; reason: string; embedsIPv4?: true };

// IANA IPv4 special-purpose blocks that are not globally reachable. The globally reachable
// exceptions inside 192.0.0.0/24 (192.0.0.9, 192.0.0.10) are refused with the rest: no webhook
// receiver lives there.
const IPV4_BLOCKS = blocks([
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared (carrier-grade NAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'broadcast'],
]);

// Named so a refusal says why; anything outside 2000::/3 that is not listed is 'reserved'.
// Blocks that embed an IPv4 address in their last 32 bits name it too ('ipv4-mapped loopback'),
// but are refused even when it is public: the sender connects to the IPv4 address itself.
const IPV6_BLOCKS = blocks([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'ipv4-mapped', true],
  ['::/96', 'ipv4-compatible', true],
  ['64:ff9b::/96', 'NAT64', true],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  // Inside 2000::/3 but not globally reachable (or, for Teredo and 6to4, a tunnel to an
  // address we cannot check). The few global anycast entries of 2001::/23 are refused with it.
  ['2001::/32', 'Teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001::/23', 'IETF protocol assignment'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
]);

export function classifyAddress(ip: string): AddressVerdict {
  const family = isIP(ip);
  if (family === 4) {
    const bytes = parseIPv4(ip);
    if (!bytes) return refused('not an IP address');
    const block = longestMatch(IPV4_BLOCKS, bytes);
    return block ? refused(block.reason) : { public: true };
  }
  if (family === 6) {
    // isIP accepts a zone index (fe80::1%eth0); a scoped address is never a global destination.
    const zone = ip.indexOf('%');
    const bytes = parseIPv6(zone === -1 ? ip : ip.slice(0, zone));
    if (!bytes) return refused('not an IP address');
    const verdict = classifyIPv6(bytes);
    return zone !== -1 && verdict.public ? refused('scoped') : verdict;
  }
  return refused('not an IP address');
}

export async function checkDestination(text: string, policy: DestinationPolicy): Promise<DestinationCheck> {
  if (text.length > MAX_DESTINATION_LENGTH) return failed(`must be at most ${MAX_DESTINATION_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return failed('must be an absolute URL');
  }
  // WHATWG parsing silently drops surrounding spaces and every tab and line break, and encodes
  // inner spaces: the URL checked and delivered to would not be the text stored and listed back.
  if (SPACE_OR_CONTROL.test(text)) return failed('must not contain spaces or control characters');
  // Normalising can lengthen the text (percent-encoding, punycode); the stored form is what counts.
  if (url.href.length > MAX_DESTINATION_LENGTH) return failed(`must be at most ${MAX_DESTINATION_LENGTH} characters`);
  if (url.protocol !== 'https:') return failed('must use https');
  // Credentials in the URL would be shown wherever endpoints are listed.
  if (url.username !== '' || url.password !== '') return failed('must not contain a user name or password');
  // url.hash is '' for an empty fragment too; '#' survives serialisation only as the delimiter.
  if (url.href.includes('#')) return failed('must not contain a fragment');
  if (url.hostname === '') return failed('must name a host');

  // WHATWG parsing has already turned numeric IPv4 forms (2130706433, 0x7f.1, 127.1) into
  // dotted quads, so a literal is recognised here whichever way it was written.
  const literal = unbracket(url.hostname);
  if (isIP(literal) !== 0) {
    const refusal = literalHostRefusal(url.hostname, policy);
    return refusal === undefined ? { ok: true, url } : failed(refusal);
  }

  // One answer whatever the resolver said: telling "does not resolve" from "resolves to a private
  // address" (and which range) would let a tenant map the names the service's own resolver knows
  // (the database, the broker, a cloud metadata host) from the registration's error.
  const outcome = await resolveAndJudge(url.hostname, policy);
  return outcome.ok ? { ok: true, url } : failed(NAME_REFUSED);
}

const NAME_REFUSED = 'host does not resolve to a public address';

export function literalHostRefusal(hostname: string, policy: DestinationPolicy): string | undefined {
  const literal = unbracket(hostname);
  if (isIP(literal) === 0 || policy.allowPrivateNetworks) return undefined;
  const verdict = classifyAddress(literal);
  return verdict.public ? undefined : `address is not public (${verdict.reason})`;
}

export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = familyOf(options);
    resolveAndJudge(hostname, policy).then(
      (outcome) => {
        let error: NodeJS.ErrnoException | undefined;
        let chosen: LookupAddress[] = [];
        if (!outcome.ok) {
          // Only a policy refusal gets our code; a name that does not resolve is an ordinary
          // DNS failure (and may be transient). Messages carry no prefix: the sender adds its own.
          error = new Error(outcome.message);
          error.code = outcome.refused ? DESTINATION_REFUSED : 'ENOTFOUND';
        } else {
          chosen = outcome.addresses.filter((a) => wanted === 0 || a.family === wanted);
          if (chosen.length === 0) {
            error = new Error('host has no address of the requested family');
            error.code = 'ENOTFOUND';
          }
        }
        // Outside the promise chain, so an exception thrown by the callback is not swallowed
        // (or turned into a second callback call).
        process.nextTick(() => {
          if (error) callback(error, options.all ? [] : '');
          else if (options.all) callback(null, chosen);
          else callback(null, chosen[0]!.address, chosen[0]!.family);
        });
      },
      // Not expected (resolver failures are judged above); fail closed all the same.
      (cause: unknown) => {
        const error: NodeJS.ErrnoException = new Error('destination check failed', { cause });
        error.code = DESTINATION_REFUSED;
        process.nextTick(() => callback(error, options.all ? [] : ''));
      },
    );
  };
}

// Names are asked of DNS through c-ares (dns.Resolver), which waits on the event loop and gives up
// by its own timeout. dns.lookup runs getaddrinfo on libuv's four threads, and a name whose DNS
// server never answers held a thread for the system resolver's whole retry cycle, past the
// attempt's timeout: four such names (any tenant can register them) stopped every other
// endpoint's new connections, the API's registrations, and the process's file and crypto work.
// A name DNS did not give addresses for without waiting (no such name, no data, a server that
// refused) is looked up through the system as well (dns.lookup: the hosts file, `localhost`),
// which the same quick DNS answer keeps quick; a DNS server that did not answer in time is not.
const RESOLVE_TIMEOUT_MS = 2_500;
const RESOLVE_TRIES = 2;
const NO_ANSWER = new Set(['ETIMEOUT', 'ECANCELLED']);

export function resolveWith(resolver: Pick<dnsPromises.Resolver, 'resolve4' | 'resolve6'>): Resolve {
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (addresses.length > 0) return addresses;
    for (const answer of [v4, v6]) if (answer.status === 'rejected' && NO_ANSWER.has((answer.reason as NodeJS.ErrnoException).code ?? '')) throw answer.reason;
    const found = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  };
}

const defaultResolve: Resolve = resolveWith(new dnsPromises.Resolver({ timeout: RESOLVE_TIMEOUT_MS, tries: RESOLVE_TRIES }));

type Judgement =
  | { ok: true; addresses: Array<{ address: string; family: 4 | 6 }> }
  | { ok: false; refused: boolean; message: string };

// Every address must pass, not just the first: the connection may be made to any of them.
async function resolveAndJudge(hostname: string, policy: DestinationPolicy): Promise<Judgement> {
  let addresses: Array<{ address: string; family: 4 | 6 }>;
  const literal = isIP(hostname);
  try {
    // Node skips `lookup` for literals, but other callers may not; never send one to DNS.
    addresses = literal !== 0 ? [{ address: hostname, family: literal === 6 ? 6 : 4 }] : await (policy.resolve ?? defaultResolve)(hostname);
  } catch {
    return { ok: false, refused: false, message: 'host does not resolve' };
  }
  if (addresses.length === 0) return { ok: false, refused: false, message: 'host does not resolve' };
  for (const { address } of addresses) {
    // A resolver answer that is not an IP literal would be looked up again by the socket.
    if (isIP(address) === 0) return { ok: false, refused: true, message: 'host resolves to something that is not an IP address' };
    if (policy.allowPrivateNetworks) continue;
    const verdict = classifyAddress(address);
    if (!verdict.public) return { ok: false, refused: true, message: `host resolves to an address that is not public (${verdict.reason})` };
  }
  return { ok: true, addresses };
}

function classifyIPv6(bytes: Uint8Array): AddressVerdict {
  const block = longestMatch(IPV6_BLOCKS, bytes);
  if (block?.embedsIPv4) {
    const inner = classifyAddress(Array.from(bytes.subarray(12)).join('.'));
    return refused(inner.public ? block.reason : `${block.reason} ${inner.reason}`);
  }
  if (block) return refused(block.reason);
  // Global unicast is 2000::/3; IANA allocates nothing routable outside it.
  return (bytes[0]! & 0xe0) === 0x20 ? { public: true } : refused('reserved');
}

function longestMatch(table: readonly Block[], bytes: Uint8Array): Block | undefined {
  return table.find((block) => block.bytes.length === bytes.length && prefixMatches(block.bytes, bytes, block.bits));
}

function prefixMatches(prefix: Uint8Array, bytes: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i += 8) {
    const mask = bits - i >= 8 ? 0xff : (0xff << (8 - (bits - i))) & 0xff;
    if ((prefix[i / 8]! & mask) !== (bytes[i / 8]! & mask)) return false;
  }
  return true;
}

// Sorted longest prefix first so the most specific block names the reason.
function blocks(rows: Array<[cidr: string, reason: string, embedsIPv4?: true]>): Block[] {
  return rows
    .map(([cidr, reason, embedsIPv4]) => {
      const [address = '', bits = ''] = cidr.split('/');
      const bytes = isIP(address) === 4 ? parseIPv4(address) : parseIPv6(address);
      if (!bytes) throw new Error(`bad block ${cidr}`);
      return { bytes, bits: Number(bits), reason, ...(embedsIPv4 ? { embedsIPv4 } : {}) };
    })
    .sort((a, b) => b.bits - a.bits);
}

// Only called on text isIP accepted, so the checks here are a second line, not the validation.
function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return Uint8Array.from(parts, Number);
}

// Parsed to bytes rather than matched as text: '::FFFF:127.0.0.1', '0:0:0:0:0:ffff:7f00:1' and
// '::ffff:7f00:1' are the same address.
function parseIPv6(text: string): Uint8Array | undefined {
  let groups = text.toLowerCase();
  const lastColon = groups.lastIndexOf(':');
  const tail = groups.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (!v4) return undefined;
    groups = `${groups.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = groups.split('::');
  if (halves.length > 2) return undefined;
  const split = (s: string | undefined) => (s ? s.split(':') : []);
  const head = split(halves[0]);
  const rest = split(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes = new Uint8Array(16);
  for (const [i, group] of all.entries()) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return undefined;
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  }
  return bytes;
}

function familyOf(options: LookupOptions): 0 | 4 | 6 {
  const family = options.family;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function refused(reason: string): AddressVerdict {
  return { public: false, reason };
}

function failed(message: string): DestinationCheck {
  return { ok: false, message };
}
