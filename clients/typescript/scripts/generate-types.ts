import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATED_TYPES_PATH, generateApiTypes } from './api-types.ts';

writeFileSync(GENERATED_TYPES_PATH, await generateApiTypes());
console.log(`wrote ${fileURLToPath(GENERATED_TYPES_PATH)}`);
