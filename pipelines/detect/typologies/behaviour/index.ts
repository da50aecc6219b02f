import type { AnyDetector } from '../../framework/detector.ts';

export const BEHAVIOUR_DETECTORS: readonly AnyDetector[] = [];
