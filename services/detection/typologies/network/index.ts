import type { AnyDetector } from '../../framework/detector.ts';
import { fanIn } from './fan_in.ts';
import { fanOut } from './fan_out.ts';
import { gatherScatter } from './gather_scatter.ts';
import { muleNetwork } from './mule_network.ts';
import { passThrough } from './pass_through.ts';
import { roundTripping } from './round_tripping.ts';
import { scatterGather } from './scatter_gather.ts';

export const NETWORK_DETECTORS: readonly AnyDetector[] = [fanIn, fanOut, passThrough, roundTripping, scatterGather, gatherScatter, muleNetwork];
