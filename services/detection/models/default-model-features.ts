// The features of the shipped default model, with one rule more than a tenant's model gets. The
// default model is fitted on simulated accounts (AMLSim) whose normal accounts almost never pay one
// counterparty twice in a day, while most of its laundering accounts do: fitted as they are, a
// second payment with one counterparty read as laundering. In a retail book it is everyday (rent
// and deposit, two payroll payments, two gifts), and the retail rows it also learns from (Berka)
// carry dates without times and cash without counterparties, so they cannot teach it. So the
// default model weighs that count only above two. A tenant's own model is fitted on its own book
// and learns there what is ordinary (decision 0069).
import { FEATURE_SPEC, type FeatureSpec } from './model.ts';

const ORDINARY_SAME_COUNTERPARTY_DAY = 2;

export const DEFAULT_MODEL_FEATURES: readonly FeatureSpec[] = FEATURE_SPEC.map((f) =>
  f.name === 'max_same_counterparty_day' ? { ...f, ordinary: ORDINARY_SAME_COUNTERPARTY_DAY } : f,
);
