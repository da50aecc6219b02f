// Where models live: a tenant's trained models (detection_models, one version per training, never
// edited) and the built-in default model shipped beside this file. A model is named by its id:
// `default`, or `m<version>` for the tenant's own.
import { readFileSync } from 'node:fs';
import { withTransaction, type Pool } from '../../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import { lockTenantDetection } from '../detection-lock.ts';
import { modelDocumentSchema, type ModelDocument } from './model.ts';

export const DEFAULT_MODEL_ID = 'default';
// The asset whose minor units the default model's money features were trained on (its provenance
// says so too): bench/train-default-model.ts reads the AMLSim amounts as USD.
export const DEFAULT_MODEL_BASE_ASSET = 'USD';
export const MODEL_ID_PATTERN = /^(default|m[1-9]\d{0,8})$/;

export interface StoredModel {
  id: string;
  // 0 for the built-in default.
  version: number;
  createdAt: Date | null;
  document: ModelDocument;
}

const DEFAULT_MODEL_FILE = new URL('./default-model.json', import.meta.url);

let builtIn: { model: StoredModel; provenance: unknown } | null | undefined;

// The shipped default model (bench/train-default-model.ts writes it), with its provenance; null
// when this build ships none.
export function defaultModel(): { model: StoredModel; provenance: unknown } | null {
  if (builtIn !== undefined) return builtIn;
  let text: string;
  try {
    text = readFileSync(DEFAULT_MODEL_FILE, 'utf8');
  } catch {
    return (builtIn = null);
  }
  const file = JSON.parse(text) as { provenance: unknown; model: unknown; trained_at: string };
  builtIn = { model: { id: DEFAULT_MODEL_ID, version: 0, createdAt: new Date(file.trained_at), document: modelDocumentSchema.parse(file.model) }, provenance: file.provenance };
  return builtIn;
}

const versionOf = (id: string): number | undefined => (MODEL_ID_PATTERN.test(id) && id !== DEFAULT_MODEL_ID ? Number(id.slice(1)) : undefined);

// The tenant's next version. Two trainings may finish together: the tenant's detection lock, held
// to the insert's commit, makes the second read the first's version instead of colliding with it.
export async function saveModel(pool: Pool, tenantId: string, document: ModelDocument, now: Date): Promise<StoredModel> {
  const version = await withTransaction(pool, async (db) => {
    await lockTenantDetection(db, tenantId);
    const { rows } = await db.query<{ version: number }>({
      text: `INSERT INTO detection_models (tenant_id, version, document, created_at)
             SELECT $1, coalesce(max(version), 0) + 1, $2::jsonb, $3 FROM detection_models WHERE tenant_id = $1
             RETURNING version`,
      values: [tenantId, JSON.stringify(document), now],
    });
    return rows[0]!.version;
  });
  return { id: `m${version}`, version, createdAt: now, document };
}

export async function loadModel(db: Pick<Pool, 'query'>, tenantId: string, id: string): Promise<StoredModel | null> {
  if (id === DEFAULT_MODEL_ID) return defaultModel()?.model ?? null;
  const version = versionOf(id);
  if (version === undefined) return null;
  const { rows } = await db.query<{ document: unknown; created_at: Date }>({
    name: 'models-load',
    text: 'SELECT document, created_at FROM detection_models WHERE tenant_id = $1 AND version = $2',
    values: [tenantId, version],
  });
  const row = rows[0];
  return row ? { id, version, createdAt: row.created_at, document: modelDocumentSchema.parse(row.document) } : null;
}

// The tenant's models, oldest first, after the built-in default (when shipped and the tenant's
// base asset is the one it reads).
export async function listModels(db: Pick<Pool, 'query'>, tenantId: string): Promise<StoredModel[]> {
  const { rows } = await db.query<{ version: number; document: unknown; created_at: Date }>({
    text: 'SELECT version, document, created_at FROM detection_models WHERE tenant_id = $1 ORDER BY version',
    values: [tenantId],
  });
  const stored = rows.map((r) => ({ id: `m${r.version}`, version: r.version, createdAt: r.created_at, document: modelDocumentSchema.parse(r.document) }));
  const shipped = defaultModel()?.model;
  // The default model reads amounts in its own asset: a tenant of another cannot run it
  // (references.ts), so it is not one of that tenant's models.
  return shipped && (await baseAssetOf(db, tenantId)) === DEFAULT_MODEL_BASE_ASSET ? [shipped, ...stored] : stored;
}

// The document of the tenant's active ruleset, if it has one.
export async function activeRulesetDocument(db: Pick<Pool, 'query'>, tenantId: string): Promise<unknown> {
  const { rows } = await db.query<{ document: unknown }>(`SELECT document FROM rulesets WHERE tenant_id = $1 AND state = 'active'`, [tenantId]);
  return rows[0]?.document ?? null;
}

// The tenant's shadow ruleset, its document and the model its learned detector runs (null without one).
export async function shadowRulesetModel(
  db: Pick<Pool, 'query'>,
  tenantId: string,
  detectorId: string,
): Promise<{ version: number; document: unknown; model: string | null } | null> {
  const { rows } = await db.query<{ version: number; document: unknown; model: string | null }>({
    text: `SELECT version, document, document #>> $2::text[] AS model FROM rulesets WHERE tenant_id = $1 AND state = 'shadow'`,
    values: [tenantId, ['detectors', detectorId, 'params', 'model']],
  });
  return rows[0] ?? null;
}

// Models never change once stored, so the detector keeps what it loaded (a bounded number per
// process); a model stored later is found on its first use.
const CACHE_LIMIT = 64;

export class ModelCache {
  private readonly models = new Map<string, Promise<StoredModel | null>>();

  get(db: Pick<Pool, 'query'>, tenantId: string, id: string): Promise<StoredModel | null> {
    const key = `${tenantId}\u0000${id}`;
    let found = this.models.get(key);
    if (!found) {
      found = loadModel(db, tenantId, id);
      // An absent model is not kept: it may be trained next.
      found.then((model) => model ?? this.models.delete(key), () => this.models.delete(key));
      if (this.models.size >= CACHE_LIMIT) this.models.delete(this.models.keys().next().value!);
      this.models.set(key, found);
    }
    return found;
  }
}
