// Console API answers shaped as the console's contract (GraphNetwork as schemas/responses.ts), for
// browser tests of the screens and for bench/console-render.ts. Served through Playwright's
// page.route, so the built app runs unchanged against them.
import type { Page, Route } from 'playwright-core';
import type { Alert, AlertDetail, ConsoleEpisodeDetail, GraphEdge, GraphNetwork, MovementPage, PartyDetail } from '../../console/web/src/payloads.ts';
import type { ConsoleAssetsResponse } from '../../schemas/console/assets.ts';

// Typed with the web app's payload types (inferred from the server's schemas), so a fixture that
// drifts from the API fails the type check instead of testing a shape the server never sends.
const money = (value: number) => ({ value: String(value), asset: 'USD', scale: 2 });

// A fan-in network around party hub-p: its account hub, `senders` sender accounts each with its
// holder party (sender1-p…), and filler accounts (no holder drawn) paying the senders, up to
// `total` nodes.
export function fanInNetwork(total = 200, senders = 12): GraphNetwork {
  const nodes: GraphNetwork['nodes'] = [];
  const edges: GraphEdge[] = [];
  const node = (kind: 'party' | 'account', id: string, openAlerts = 0) => nodes.push({ id: `${kind}:${id}`, kind, label: id, external_id: id, attributes: {}, open_alerts: openAlerts });
  const edge = (type: string, from: string, to: string, value: number | null, i: number) =>
    edges.push({
      id: `e${edges.length + 1}`,
      source: from,
      target: to,
      type,
      label: type,
      directed: true,
      valid_from: null,
      valid_to: null,
      count: value === null ? 0 : 1 + (i % 3),
      amount: value === null ? null : money(value),
      unpriced: 0,
      first_at: value === null ? null : `2026-08-${String(10 + (i % 18)).padStart(2, '0')}T10:00:00.000Z`,
      last_at: value === null ? null : `2026-08-${String(12 + (i % 18)).padStart(2, '0')}T10:00:00.000Z`,
      attributes: {},
    });
  node('party', 'hub-p', 1);
  node('account', 'hub', 1);
  edge('holds', 'party:hub-p', 'account:hub', null, 0);
  for (let i = 1; i <= senders; i += 1) {
    node('account', `sender${i}`);
    edge('transfer', `account:sender${i}`, 'account:hub', 30_000 + i * 150, i);
    node('party', `sender${i}-p`);
    edge('holds', `party:sender${i}-p`, `account:sender${i}`, null, i);
  }
  for (let i = 1; nodes.length < total; i += 1) {
    const payee = `account:sender${1 + (i % senders)}`;
    node('account', `payer${i}`);
    edge('transfer', `account:payer${i}`, payee, 5_000 + i * 37, i);
  }
  return { center: 'party:hub-p', depth: 3, window: { since: null, until: null }, truncated: false, nodes, edges };
}

// GraphPaths from hub-p to sender1-p through the fan-in network: hub-p holds hub, sender1 paid
// hub, sender1-p holds sender1. Any other party is unknown (the governed 404).
function pathsAnswer(from: string, to: string, network = fanInNetwork()) {
  const known = new Set(network.nodes.filter((n) => n.kind === 'party').map((n) => n.external_id ?? ''));
  const missing = (['from', 'to'] as const).filter((k) => !known.has(k === 'from' ? from : to));
  if (missing.length > 0) {
    return { status: 404, body: { type: 'https://svc.example/problems/resource/not_found', title: 'Not found', status: 404, code: 'svc:resource/not_found', detail: 'unknown party', errors: missing.map((path) => ({ path, code: 'svc:resource/not_found', message: 'no party with this external_id in this tenant' })) } };
  }
  const chain = ['party:hub-p', 'account:hub', 'account:sender1', 'party:sender1-p'];
  const edges = network.edges.filter((e) => chain.includes(e.source) && chain.includes(e.target));
  const path = { length: 3, nodes: chain, edges: ['party:hub-p|account:hub', 'account:sender1|account:hub', 'party:sender1-p|account:sender1'].map((pair) => edges.find((e) => `${e.source}|${e.target}` === pair)!.id) };
  return { status: 200, body: { from: `party:${from}`, to: `party:${to}`, max_depth: 6, window: { since: null, until: null }, paths: [path], truncated: false, nodes: network.nodes.filter((n) => chain.includes(n.id)), edges } };
}

const USER = { id: '00000000-0000-4000-8000-000000000001', tenant: 'acme', email: 'ana@example.com', role: 'analyst', must_change_password: false };
export const SESSION = { user: USER, csrf_token: 'fixture-csrf-token', session: { expires_at: '2026-09-02T00:00:00.000Z', idle_expires_at: '2026-09-01T12:30:00.000Z' } };

export const ALERTS: Alert[] = Array.from({ length: 30 }, (_, i) => ({
  alert_id: `alert-${i + 1}`,
  detector: i === 0 ? 'fan_in' : 'structuring',
  detector_version: 1,
  typology: i === 0 ? 'fan-in' : 'structuring',
  ruleset_version: 1,
  severity: i === 0 ? 'high' : 'medium',
  score: i === 0 ? 0.8 : 0.5,
  status: 'open',
  subject: { kind: 'account', external_id: i === 0 ? 'hub' : `acct${i}` },
  party_id: i === 0 ? 'hub-p' : `acct${i}-p`,
  window: { from: '2026-08-29T09:00:00.000Z', to: '2026-09-01T09:00:00.000Z' },
  summary: '',
  explanation: '',
  hits: 1,
  evidence: {},
  created_at: '2026-09-01T09:00:00.000Z',
  updated_at: '2026-09-01T09:00:00.000Z',
  episode_id: `episode-${i + 1}`,
}));

// The fan-in alert's evidence as detection writes it: base-asset minor units as strings, counts
// as numbers (services/detection/framework/detector.ts Evidence).
const FAN_IN_EVIDENCE = {
  movements: ['fan-1', 'fan-2'],
  counterparties: ['account:sender1', 'party:sender2-p'],
  amounts: { total: '15488800', count: 12, asset: 'USD', in: '15488800', out: '0' },
  window: { from: '2026-08-29T09:00:00.000Z', to: '2026-09-01T09:00:00.000Z' },
  thresholds: [
    { name: 'new_senders', threshold: 5, observed: 12 },
    { name: 'inbound_total', threshold: '1000000', observed: '15488800' },
  ],
  baseline: { days: 30, mean: '120000', stddev: '45000', observed: '15488800', metric: 'daily_inbound' },
};

const ALERT_DETAIL: AlertDetail = { ...ALERTS[0]!, summary: '12 new senders in 3 days.', explanation: '12 new senders in 3 days.', evidence: FAN_IN_EVIDENCE, evidence_history: [] };

const ASSETS: ConsoleAssetsResponse = { base_asset: { asset: 'USD', scale: 2 }, assets: [{ asset: 'JPY', scale: 0 }, { asset: 'USD', scale: 2 }] };

const PARTY: PartyDetail = {
  party: { object: 'party', external_id: 'hub-p', type: 'person', status: 'active', created_at: '2026-01-01T00:00:00.000Z', legal_names: ['Hub Holder'], sequence: 1, event_id: 'evt_0', occurred_at: '2026-01-01T00:00:00.000Z', received_at: '2026-01-01T00:00:00.000Z', version_count: 1 },
  accounts: [{ object: 'account', external_id: 'hub', type: 'wallet', holder_party_id: 'hub-p', asset: 'USD', status: 'active', opened_at: '2026-01-01T00:00:00.000Z', sequence: 1, event_id: 'evt_1', occurred_at: '2026-01-01T00:00:00.000Z', received_at: '2026-01-01T00:00:00.000Z', version_count: 1 }],
  accounts_truncated: false,
  posture: { band: 'high', computed_at: '2026-09-01T09:00:00.000Z', staleness_seconds: 0, coverage: 'complete', reasons: [{ detector: 'fan_in', typology: 'fan-in', severity: 'high', open_alerts: 1, latest_at: '2026-09-01T09:00:00.000Z' }] },
};

const MOVEMENTS: MovementPage = {
  data: [
    {
      object: 'movement',
      external_id: 'fan-1',
      type: 'p2p',
      status: 'completed',
      amount: money(30150),
      debit: { account_id: 'sender1' },
      credit: { account_id: 'hub' },
      parties: { debit: 'sender1-p', credit: 'hub-p' },
      normalized_amount: null,
      normalization: { status: 'not_needed' },
      linked_from: [],
      sequence: 1,
      event_id: 'evt_2',
      occurred_at: '2026-08-29T12:00:00.000Z',
      received_at: '2026-08-29T12:00:01.000Z',
      version_count: 1,
    },
  ],
  has_more: false,
};

const json = (route: Route, body: unknown, status = 200) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

// Stubs every /console/v1 call the screens make; records the state-changing ones with their
// CSRF header.
export async function stubConsoleApi(page: Page, network = fanInNetwork()) {
  const writes: Array<{ method: string; path: string; csrf: string | undefined; body: unknown }> = [];
  const reads: string[] = [];
  const episode: ConsoleEpisodeDetail = {
    episode_id: 'episode-1',
    status: 'open',
    case_status: 'open',
    disposition: null,
    severity: 'high',
    // The activity came the day before the case was opened (detection lagged, or a fact was late).
    first_alert_at: '2026-08-31T08:00:00.000Z',
    last_alert_at: '2026-09-01T09:00:00.000Z',
    alert_count: 1,
    members: [
      { kind: 'account', external_id: 'hub' },
      { kind: 'party', external_id: 'hub-p' },
    ],
    related: [{ kind: 'account', external_id: 'sender1' }],
    parties: [{ external_id: 'hub-p', via_accounts: ['hub'] }],
    created_at: '2026-09-01T09:00:00.000Z',
    updated_at: '2026-09-01T09:00:00.000Z',
    assignee: null,
    alerts: [{ ...ALERTS[0]!, evidence: FAN_IN_EVIDENCE }],
    case_history: [],
    audit: [],
  };
  await page.route(/\/console\/v1\//, async (route) => {
    const request = route.request();
    const url = new URL(request.url());
    const path = url.pathname.replace('/console/v1', '');
    const method = request.method();
    if (method === 'GET') reads.push(path + url.search);
    else writes.push({ method, path, csrf: request.headers()['x-csrf-token'], body: request.postDataJSON() });
    if (path === '/session') return json(route, SESSION);
    if (path === '/alerts') {
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 25);
      const data = ALERTS.slice(start, start + limit);
      return json(route, { data, has_more: start + limit < ALERTS.length, ...(start + limit < ALERTS.length ? { next_cursor: String(start + limit) } : {}) });
    }
    if (path === '/assets') return json(route, ASSETS);
    if (path.startsWith('/alerts/')) return json(route, ALERT_DETAIL);
    if (path.startsWith('/network/')) return json(route, network);
    if (path === '/paths') {
      const answer = pathsAnswer(url.searchParams.get('from') ?? '', url.searchParams.get('to') ?? '', network);
      return json(route, answer.body, answer.status);
    }
    if (path === '/episodes/episode-1/disposition') {
      const body = request.postDataJSON();
      episode.disposition = body.disposition;
      episode.case_status = 'closed';
      episode.audit.push({ at: '2026-09-01T10:00:00.000Z', actor_kind: 'user', actor_email: USER.email, action: 'case.disposed', subject: 'epsd_episode-1', details: body });
      return json(route, episode);
    }
    // Another analyst set the case to investigating just before: the status sent is refused as
    // not what the page showed.
    if (path === '/episodes/episode-1/status') {
      episode.case_status = 'investigating';
      return json(route, { type: 'about:blank', title: 'Conflict', status: 409, code: 'svc:sequence/conflict', detail: 'the case is investigating now, not open as shown.' }, 409);
    }
    if (path === '/episodes/episode-1') return json(route, episode);
    if (path === '/parties/hub-p') return json(route, PARTY);
    if (path === '/parties/hub-p/movements') return json(route, MOVEMENTS);
    return json(route, { code: 'svc:request/not_found', detail: 'no fixture' }, 404);
  });
  return { writes, reads, episode };
}
