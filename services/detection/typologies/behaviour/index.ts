import type { AnyDetector } from '../../framework/detector.ts';
import { dormantReactivation } from './dormant_reactivation.ts';
import { expectedProfileDeviation } from './expected_profile_deviation.ts';
import { highRiskGeography } from './high_risk_geography.ts';
import { largeCashAggregate } from './large_cash_aggregate.ts';
import { newCounterpartyHighAmount } from './new_counterparty_high_amount.ts';
import { roundAmounts } from './round_amounts.ts';
import { splitTransfers } from './split_transfers.ts';
import { structuring } from './structuring.ts';
import { velocitySpike } from './velocity_spike.ts';

export const BEHAVIOUR_DETECTORS: readonly AnyDetector[] = [
  largeCashAggregate,
  structuring,
  splitTransfers,
  velocitySpike,
  dormantReactivation,
  roundAmounts,
  newCounterpartyHighAmount,
  highRiskGeography,
  expectedProfileDeviation,
];
