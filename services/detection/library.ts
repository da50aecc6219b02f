// The typology library: every detector the service knows. Rulesets choose among them.
import type { AnyDetector } from '../../pipelines/detect/framework/detector.ts';
import { BEHAVIOUR_DETECTORS } from '../../pipelines/detect/typologies/behaviour/index.ts';
import { CONTROL_DETECTORS } from '../../pipelines/detect/typologies/controls/index.ts';
import { NETWORK_DETECTORS } from '../../pipelines/detect/typologies/network/index.ts';
import { learnedModel } from './models/detector.ts';

export const DETECTOR_LIBRARY: readonly AnyDetector[] = [...BEHAVIOUR_DETECTORS, ...NETWORK_DETECTORS, ...CONTROL_DETECTORS, learnedModel];
