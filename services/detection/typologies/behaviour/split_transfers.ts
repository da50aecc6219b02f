// Split transfers: one payment cut into several to the same counterparty within hours. Seen from
// both ends: the paying account (several out to one counterparty) and the receiving account
// (several in from one), so both are flagged. Amounts do not matter (a split can be of a few
// dollars or of thousands); the repetition to one counterparty within hours does. The default
// count, two within 24 hours, was chosen on one AMLSim dev set and judged on the other
// (docs/decisions/0026): no normal account there pays one counterparty twice in a day. A book where
// that is ordinary raises it in its ruleset (three was the default before).
//
// What is left out, because repetition is ordinary there:
// - movements that are not transfers: card and other merchant payments, refunds, reversals and
//   settlements (a customer buys coffee twice a day, at a shop that declared nothing about itself;
//   decision 0057). The activity record does not carry a movement's type, so the types of the
//   movements of a group that would qualify are read from the canonical model;
// - counterparties that are businesses taking repeated payments: a counterparty account of a
//   merchant or settlement type, or held by a party of a merchant, marketplace, payroll or
//   financial-institution segment;
// - counterparty accounts paid by (for the subject's payments out) or paying (for its payments
//   in) more than maxCounterpartyReach distinct accounts within the window, whatever their data
//   says: an exchange or a biller the customer did not declare as such (on IBM HI-Small one
//   exchange account was paid twice in a day by each of thousands of customers). A fan-in hub of
//   mules is fan_in's to judge, not this rule's. On the AMLSim dev sets no counterparty of a
//   repeated transfer dealt with more than six others in its day, so the default (20) changes
//   nothing there (docs/decisions/0026);
// - the party's own accounts (a sweep between one's own accounts pays nobody);
// - counterparties that cannot be identified (no key to group on).
// Subjects that are themselves such businesses get a much higher count (segmentDefaults).
//
// Severity: excess = the largest group's count / minCount (grade.ts).
import { z } from 'zod';
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import { accountDataSchema } from '../../../../schemas/families/account.ts';
import { movementDataSchema } from '../../../../schemas/families/movement.ts';
import { partyDataSchema } from '../../../../schemas/families/party.ts';
import { defineDetector, noHit, type DetectorOutcome } from '../../framework/detector.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { dealings, windowStart } from './dealings.ts';
import { counted, evidenceOf } from './evidence.ts';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { minorUnits, sumOf } from './money.ts';

const SEGMENTS = partyDataSchema.shape.segment.unwrap().options;
const ACCOUNT_TYPES = accountDataSchema.shape.type.options;
const MOVEMENT_TYPES = movementDataSchema.shape.type.options;

const params = z.strictObject({
  minCount: z.number().int().min(2).default(2),
  window: z.enum(['1h', '24h']).default('24h'),
  // Base minor units; 0: a split of tiny amounts is still a split.
  minTotal: minorUnits('0'),
  direction: z.enum(['in', 'out', 'both']).default('both'),
  excludeMovementTypes: z.array(z.enum(MOVEMENT_TYPES)).default(['merchant_payment', 'refund', 'reversal', 'settlement']),
  excludeCounterpartySegments: z.array(z.enum(SEGMENTS)).default(['merchant', 'marketplace', 'payroll', 'financial_institution']),
  excludeCounterpartyAccountTypes: z.array(z.enum(ACCOUNT_TYPES)).default(['merchant', 'settlement']),
  // null: no counterparty is judged a business by its breadth alone.
  maxCounterpartyReach: z.number().int().min(1).nullable().default(20),
});
type Params = z.infer<typeof params>;

interface Group {
  counterparty: string;
  direction: 'in' | 'out';
  records: ActivityRecord[];
  sum: bigint;
}

export const splitTransfers = defineDetector({
  id: 'split_transfers',
  typology: 'Payment split into several transfers to one counterparty',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['1h', '24h'],
  params,
  segmentDefaults: {
    merchant: { minCount: 10 },
    marketplace: { minCount: 10 },
    payroll: { minCount: 10 },
    financial_institution: { minCount: 20 },
  },
  async evaluate(ctx, p): Promise<DetectorOutcome> {
    const from = windowStart(ctx, p.window);
    // Almost every account makes fewer movements than that in a day: no listing needed.
    const stats = await ctx.window(p.window);
    if (stats.in.count < p.minCount && stats.out.count < p.minCount) return noHit();
    const { records } = await dealings(ctx, from);
    const groups = new Map<string, Group>();
    for (const record of records) {
      if (record.counterparty === null || (p.direction !== 'both' && record.direction !== p.direction)) continue;
      const key = `${record.direction}|${record.counterparty}`;
      const group = groups.get(key) ?? { counterparty: record.counterparty, direction: record.direction, records: [], sum: 0n };
      group.records.push(record);
      groups.set(key, group);
    }
    const minTotal = BigInt(p.minTotal);
    const summed = (g: Group): Group => ({ ...g, sum: sumOf(g.records.map((r) => r.baseValue)) });
    const qualifies = (g: Group) => g.records.length >= p.minCount && g.sum >= minTotal;
    // Judged again without the movements that are not transfers.
    const byCount = [...groups.values()].map(summed).filter(qualifies);
    const candidates = (await transfersOnly(ctx, byCount, p)).map(summed).filter(qualifies);
    // All at once: their reads are gathered (a hub has hundreds of candidate groups, and one read
    // after another made an evaluation of it hundreds of round trips).
    const business = await Promise.all(candidates.map((group) => isBusiness(ctx, group, from, p)));
    const qualifying = candidates.filter((_, i) => !business[i]);
    if (qualifying.length === 0) return noHit();

    qualifying.sort((a, b) => b.records.length - a.records.length || (b.sum > a.sum ? 1 : b.sum < a.sum ? -1 : 0));
    const top = qualifying[0]!;
    const listed = qualifying.flatMap((g) => g.records);
    const { severity, score } = grade(top.records.length / p.minCount);
    return {
      outcome: 'hit',
      severity,
      score,
      evidence: evidenceOf(ctx, {
        records: listed,
        from,
        to: ctx.at,
        counterparties: qualifying.map((g) => g.counterparty),
        thresholds: qualifying.map((g) => ({ name: `movements_${g.direction}_one_counterparty`, threshold: p.minCount, observed: g.records.length })),
        facts: {
          groups: qualifying.map((g) => ({ counterparty: g.counterparty, direction: g.direction, count: g.records.length, sum: g.sum.toString(), movements: g.records.map((r) => r.movementId) })),
        },
      }),
      summary:
        `${counted(top.records.length, 'transfer')} ${top.direction === 'out' ? 'to' : 'from'} one counterparty within ${p.window} ` +
        `(${formatMoney(top.sum, ctx.baseAsset)} in all); the rule fires at ${p.minCount}` +
        (qualifying.length > 1 ? `, and ${qualifying.length - 1} more counterparties show the same pattern.` : '.'),
    };
  },
});

// The groups without their movements of an excluded type. Only groups that would qualify are
// looked at: almost no account has one, so almost no evaluation reads the types.
async function transfersOnly(ctx: SubjectContext, groups: Group[], p: Params): Promise<Group[]> {
  if (groups.length === 0 || p.excludeMovementTypes.length === 0) return groups;
  const types = await ctx.movementTypes(groups.flatMap((g) => g.records.map((r) => r.movementId)));
  const excluded = new Set<string>(p.excludeMovementTypes);
  return groups.map((g) => ({ ...g, records: g.records.filter((r) => !excluded.has(types.get(r.movementId) ?? '')) }));
}

// A counterparty whose business is taking (or making) repeated payments.
async function isBusiness(ctx: SubjectContext, group: Group, from: Date, p: Params): Promise<boolean> {
  const [kind, ...rest] = group.counterparty.split(':');
  const id = rest.join(':');
  let holder: string | undefined;
  if (kind === 'account') {
    const account = await ctx.entity('account', id);
    const type = account?.data.type;
    if (typeof type === 'string' && (p.excludeCounterpartyAccountTypes as readonly string[]).includes(type)) return true;
    holder = typeof account?.data.holder_party_id === 'string' ? account.data.holder_party_id : undefined;
  } else if (kind === 'party') {
    holder = id;
  }
  if (holder) {
    const party = await ctx.entity('party', holder);
    const excluded = p.excludeCounterpartySegments as readonly string[];
    // A party that declares no segment but is a merchant or a financial institution by type.
    const segment = party?.data.segment ?? party?.data.type;
    if (typeof segment === 'string' && excluded.includes(segment)) return true;
  }
  if (kind !== 'account' || p.maxCounterpartyReach === null) return false;
  // Paid by everyone when the subject pays it; paying everyone when it pays the subject.
  // Unknown (the network did not answer in time): judged as any other counterparty.
  const reach = await ctx.accountReach(id, group.direction === 'out' ? 'in' : 'out', from, p.maxCounterpartyReach);
  return reach !== null && reach > p.maxCounterpartyReach;
}
