#!/usr/bin/env node
// The operator CLI. Sources are TypeScript, loaded through tsx's ESM loader.
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/main.ts');
