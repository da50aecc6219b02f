// The control-event detectors: patterns in what the customer's own controls report.
//
// When each fires. A pattern is reported only once it is complete in event time, at the instant
// evaluated (ctx.at), from facts at or before it:
// - sanctions_hit_reported: on the control event itself (the reported hit is the whole
//   pattern), and again on every movement of the party or account while the hit is within the
//   lookback, so money moving after a hit is never missed (the alert store merges these hits into
//   one alert per overlapping window).
// - repeated_control_failures: on the control event that brings a count to its minimum; the
//   pattern is made of control events only, so a movement adds nothing to it.
// - kyc_downgrade_outflow: on the movement that makes the outflow after the downgrade cross its
//   thresholds; the outflow must follow the downgrade in event time. It also runs on control
//   events: an evaluation at the instant of a downgrade sees no outflow after it and answers
//   no_hit, but a second KYC event (say a failed verification after a downgrade) evaluated later
//   than the outflow of the first can still complete the pattern.
// - account_takeover_sequence: on the movement only. The transfer must come strictly after the
//   last of device.changed, password.reset and beneficiary.added, so at the instant of any of
//   those control events the sequence cannot be complete yet.
// A control event that arrives late, with an occurred_at before movements already evaluated,
// does not re-evaluate those movements: the pattern it completes is found on the party's next
// movement (kyc_downgrade_outflow, account_takeover_sequence) within the window.
import type { AnyDetector } from '../../framework/detector.ts';
import { accountTakeoverSequence } from './account_takeover_sequence.ts';
import { kycDowngradeOutflow } from './kyc_downgrade_outflow.ts';
import { repeatedControlFailures } from './repeated_control_failures.ts';
import { sanctionsHitReported } from './sanctions_hit_reported.ts';

export const CONTROL_DETECTORS: readonly AnyDetector[] = [sanctionsHitReported, repeatedControlFailures, kycDowngradeOutflow, accountTakeoverSequence];
