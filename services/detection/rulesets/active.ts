// Which rulesets a tenant runs: its active one (else the built-in default, version 0) on live
// traffic, and the one in shadow, if any, beside it. Read through a short cache: a ruleset
// activated or put in shadow takes effect within CACHE_MS on every detection worker.
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { AnyDetector } from '../framework/detector.ts';
import type { MoneyDefaults } from '../framework/money-params.ts';
import { compileRuleset, defaultRulesetDocument, type CompiledRuleset } from '../framework/ruleset.ts';
import { moneyDefaultsFor } from './money-defaults.ts';

const CACHE_MS = 5_000;

export interface TenantRulesets {
  live: CompiledRuleset;
  shadow: CompiledRuleset | null;
}

export class RulesetCache {
  // Per tenant, its rulesets or their read in flight: the evaluations of a batch that find the
  // entry expired share one read (each made its own, and compiled the rulesets again).
  private readonly cached = new Map<string, { at: number; rulesets: Promise<TenantRulesets> }>();
  private readonly fallback: CompiledRuleset;

  constructor(
    private readonly pool: Pool,
    private readonly library: readonly AnyDetector[],
    private readonly now: () => number = Date.now,
  ) {
    this.fallback = compileOrThrow(0, defaultRulesetDocument(library), library);
  }

  forTenant(tenantId: string): Promise<TenantRulesets> {
    const hit = this.cached.get(tenantId);
    if (hit && this.now() - hit.at < CACHE_MS) return hit.rulesets;
    const entry = { at: this.now(), rulesets: this.read(tenantId) };
    this.cached.set(tenantId, entry);
    // A failed read is not kept: the next call reads again.
    entry.rulesets.catch(() => {
      if (this.cached.get(tenantId) === entry) this.cached.delete(tenantId);
    });
    return entry.rulesets;
  }

  // Money parameters left to their defaults are in the tenant's base asset at the rate valid now,
  // so a rate file loaded takes effect with the next read (decision 0081).
  private async read(tenantId: string): Promise<TenantRulesets> {
    const { rows } = await this.pool.query<{ version: number; state: 'active' | 'shadow'; document: unknown }>({
      name: 'rulesets-running',
      text: `SELECT version, state, document FROM rulesets WHERE tenant_id = $1 AND state IN ('active', 'shadow')`,
      values: [tenantId],
    });
    const active = rows.find((r) => r.state === 'active');
    const shadow = rows.find((r) => r.state === 'shadow');
    const money = await moneyDefaultsFor(this.pool, tenantId, new Date(this.now()));
    const fallback = money.kind === 'usd' ? this.fallback : compileOrThrow(0, defaultRulesetDocument(this.library, money), this.library, money);
    return {
      live: active ? compileOrThrow(active.version, active.document, this.library, money) : fallback,
      shadow: shadow ? compileOrThrow(shadow.version, shadow.document, this.library, money) : null,
    };
  }
}

// Stored rulesets were checked when they were created; one that no longer compiles means the
// library lost a detector it names, which is a deployment error, not a data problem.
function compileOrThrow(version: number, document: unknown, library: readonly AnyDetector[], moneyDefaults?: MoneyDefaults): CompiledRuleset {
  const compiled = compileRuleset(version, document, library, { rules: false, moneyDefaults });
  if (!compiled.ok) throw new Error(`ruleset ${version} no longer compiles: ${compiled.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  return compiled.ruleset;
}
