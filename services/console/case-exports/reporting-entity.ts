import { z } from 'zod';
import type { Pool } from '../../../platform/postgres/pool.ts';

// A tenant's goAML reporting entity (infra/postgres/0026_goaml_reporting_entities): the FIU's id
// for it, the branch, the reporting person and the report's location, the institution its own
// accounts are held at, and the FIU's lookup codes. Lengths are goAML's.

type Db = Pick<Pool, 'query'>;

const code = z.string().min(1).max(10);
const codes = z.record(z.string().min(1).max(64), code);

export const reportingEntitySchema = z.strictObject({
  rentity_id: z.number().int().min(1).max(2_147_483_647),
  rentity_branch: z.string().min(1).max(255),
  institution_name: z.string().min(1).max(255),
  institution_code: z.string().min(1).max(50),
  country_code: z.string().regex(/^[A-Z]{2}$/),
  reporting_person: z.strictObject({ first_name: z.string().min(1).max(100), last_name: z.string().min(1).max(100), email: z.string().max(255).optional() }),
  location: z.strictObject({ type: code, address: z.string().min(1).max(100), city: z.string().min(1).max(255), zip: z.string().max(10).optional() }),
  // The FIU's codes (goAML lookups differ per FIU): conduction (transmode) and funds codes per
  // movement type, report indicator codes per detector. Anything unmapped is reported as "-".
  lookups: z
    .strictObject({ transmode: codes.default({}), funds: codes.default({}), indicators: codes.default({}) })
    .default({ transmode: {}, funds: {}, indicators: {} }),
});

export type ReportingEntity = z.infer<typeof reportingEntitySchema>;

interface Row {
  rentity_id: number;
  rentity_branch: string;
  institution_name: string;
  institution_code: string;
  country_code: string;
  reporting_first_name: string;
  reporting_last_name: string;
  reporting_email: string | null;
  location_type: string;
  location_address: string;
  location_city: string;
  location_zip: string | null;
  lookups: unknown;
}

export async function findReportingEntity(db: Db, tenantId: string): Promise<ReportingEntity | undefined> {
  const { rows } = await db.query<Row>('SELECT * FROM goaml_reporting_entities WHERE tenant_id = $1', [tenantId]);
  const r = rows[0];
  if (!r) return undefined;
  // Parsed back through the schema: stored JSON is a boundary too.
  return reportingEntitySchema.parse({
    rentity_id: r.rentity_id,
    rentity_branch: r.rentity_branch,
    institution_name: r.institution_name,
    institution_code: r.institution_code,
    country_code: r.country_code,
    reporting_person: { first_name: r.reporting_first_name, last_name: r.reporting_last_name, ...(r.reporting_email ? { email: r.reporting_email } : {}) },
    location: { type: r.location_type, address: r.location_address, city: r.location_city, ...(r.location_zip ? { zip: r.location_zip } : {}) },
    lookups: r.lookups,
  });
}

export type PutReportingEntityOutcome = { kind: 'saved' } | { kind: 'unknown_tenant' };

// Creates or replaces the tenant's settings (the operator's action: svc goaml set).
export async function putReportingEntity(db: Db, tenantId: string, s: ReportingEntity, at: Date): Promise<PutReportingEntityOutcome> {
  const result = await db.query(
    `INSERT INTO goaml_reporting_entities (tenant_id, rentity_id, rentity_branch, institution_name, institution_code, country_code,
       reporting_first_name, reporting_last_name, reporting_email, location_type, location_address, location_city, location_zip, lookups, updated_at)
     SELECT tenant_id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 FROM tenants WHERE tenant_id = $1
     ON CONFLICT (tenant_id) DO UPDATE SET rentity_id = excluded.rentity_id, rentity_branch = excluded.rentity_branch,
       institution_name = excluded.institution_name, institution_code = excluded.institution_code, country_code = excluded.country_code,
       reporting_first_name = excluded.reporting_first_name, reporting_last_name = excluded.reporting_last_name,
       reporting_email = excluded.reporting_email, location_type = excluded.location_type, location_address = excluded.location_address,
       location_city = excluded.location_city, location_zip = excluded.location_zip, lookups = excluded.lookups, updated_at = excluded.updated_at`,
    [
      tenantId, s.rentity_id, s.rentity_branch, s.institution_name, s.institution_code, s.country_code,
      s.reporting_person.first_name, s.reporting_person.last_name, s.reporting_person.email ?? null,
      s.location.type, s.location.address, s.location.city, s.location.zip ?? null, JSON.stringify(s.lookups), at,
    ],
  );
  return result.rowCount === 1 ? { kind: 'saved' } : { kind: 'unknown_tenant' };
}
