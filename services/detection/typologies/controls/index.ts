// The control-event detectors: patterns in what the customer's own controls report.
//
// When each fires. A pattern is reported only once it is complete in event time, at the instant
// evaluated (ctx.at), from facts at or before it:
// - sanctions_hit_reported: on the control event itself (the reported hit is the whole
//   pattern), and again on every movement of the party or account while the hit is within the
//   lookback, so money moving after a hit is never missed (the alert store merges these hits into
//   one alert per detector, subject and overlapping window).
// - repeated_control_failures: on the control event that brings a count to its minimum; the
//   pattern is made of control events only, so a movement adds nothing to it.
// - kyc_downgrade_outflow: on the movement that makes the outflow after the downgrade cross its
//   thresholds; only outflow strictly after the KYC event counts. It also runs on control
//   events: evaluated at the instant of a downgrade it sees no outflow after that downgrade, but
//   a later KYC event (a failed verification after a downgrade) can find the outflow that
//   followed the earlier one already past its thresholds.
// - account_takeover_sequence: on the movement only. The transfer must come strictly after the
//   last of device.changed, password.reset and beneficiary.added, so evaluated at the instant of
//   any of those control events the sequence cannot be complete yet.
// A control event that arrives late, with an occurred_at before movements already evaluated,
// does not re-evaluate them: the pattern it completes is found on the party's next movement
// within the window (kyc_downgrade_outflow, account_takeover_sequence), or not at all if none
// comes.
import type { AnyDetector } from '../../framework/detector.ts';
import { accountTakeoverSequence } from './account_takeover_sequence.ts';
import { kycDowngradeOutflow } from './kyc_downgrade_outflow.ts';
import { repeatedControlFailures } from './repeated_control_failures.ts';
import { sanctionsHitReported } from './sanctions_hit_reported.ts';

export const CONTROL_DETECTORS: readonly AnyDetector[] = [sanctionsHitReported, repeatedControlFailures, kycDowngradeOutflow, accountTakeoverSequence];
