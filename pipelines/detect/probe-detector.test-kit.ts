import { z } from 'zod';
import { defineDetector, noHit } from '../../services/detection/framework/detector.ts';

// A detector that never hits by itself, for tests that record its hits by hand (recordHits,
// assignEpisodes): only its id, typology and subject kind matter.
export const probeDetector = (id: string) =>
  defineDetector({
    id,
    typology: 'probe',
    version: 1,
    subjects: ['account'],
    triggers: ['movement'],
    needs: [],
    windows: ['24h'],
    params: z.strictObject({}),
    evaluate: async () => noHit(),
  });
