import type { AnyDetector } from '../../framework/detector.ts';

export const CONTROL_DETECTORS: readonly AnyDetector[] = [];
