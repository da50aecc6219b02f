import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATED_CATALOG_PATH, GENERATED_TYPES_PATH, generateApiTypes, generateWebhookCatalog } from './api-types.ts';

writeFileSync(GENERATED_TYPES_PATH, await generateApiTypes());
writeFileSync(GENERATED_CATALOG_PATH, generateWebhookCatalog());
console.log(`wrote ${fileURLToPath(GENERATED_TYPES_PATH)} and ${fileURLToPath(GENERATED_CATALOG_PATH)}`);
