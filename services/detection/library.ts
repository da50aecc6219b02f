// The typology library: every detector the service knows. Rulesets choose among them.
import type { AnyDetector } from './framework/detector.ts';
import { BEHAVIOUR_DETECTORS } from './typologies/behaviour/index.ts';
import { CONTROL_DETECTORS } from './typologies/controls/index.ts';
import { NETWORK_DETECTORS } from './typologies/network/index.ts';
import { learnedModel } from './models/detector.ts';

export const DETECTOR_LIBRARY: readonly AnyDetector[] = [...BEHAVIOUR_DETECTORS, ...NETWORK_DETECTORS, ...CONTROL_DETECTORS, learnedModel];
