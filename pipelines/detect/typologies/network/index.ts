import type { AnyDetector } from '../../framework/detector.ts';

export const NETWORK_DETECTORS: readonly AnyDetector[] = [];
