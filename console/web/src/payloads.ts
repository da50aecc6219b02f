// The console API's payloads as the web app reads them: the server's route schemas
// (schemas/console/*.ts, schemas/responses.ts) inferred with type-only imports, erased from the
// bundle, so a field renamed on the server fails `npx tsc --noEmit -p console/web`. Where a route
// schema leaves an entity's own fields open (the canonical views spread the stored data), they
// are narrowed here with the canonical family schemas the data was validated against.
import type { z } from 'zod';
import type { ConsoleEpisodeDetail } from '../../../schemas/console/cases.ts';
import type { ConsoleAlertDetail, ConsoleNetwork, ConsolePaths, PartyPage, consoleMovementPageSchema } from '../../../schemas/console/routes.ts';
import type { accountDataSchema } from '../../../schemas/families/account.ts';
import type { movementDataSchema } from '../../../schemas/families/movement.ts';
import type { partyDataSchema } from '../../../schemas/families/party.ts';
import type { alertSchema } from '../../../schemas/responses.ts';
import type { Evidence } from '../../../services/detection/framework/detector.ts';

export type { ConsoleEpisodeDetail, Evidence };
export type Alert = z.infer<typeof alertSchema>;
export type AlertDetail = ConsoleAlertDetail;
export type Money = { value: string; asset: string; scale: number };

// Network nodes carry open_alerts (services/console/routes/parties.ts); path nodes do not.
export type GraphNode = ConsolePaths['nodes'][number] & { open_alerts?: number };
export type GraphEdge = ConsoleNetwork['edges'][number];
export type GraphNetwork = ConsoleNetwork;
export type GraphPaths = ConsolePaths;

// GET /console/v1/parties/:id: the canonical party and accounts with their own fields, the party's
// identifiers only as hashes (services/console/routes/parties.ts hashedIdentifiers).
type HashedIdentifiers = { identifiers?: Array<{ type: string; value_hash: string; verification_status?: string }> };
type PartyEntity = PartyPage['party'] & Omit<z.infer<typeof partyDataSchema>, 'identifiers'> & HashedIdentifiers;
type AccountEntity = PartyPage['accounts'][number] & z.infer<typeof accountDataSchema>;
export type PartyDetail = Omit<PartyPage, 'party' | 'accounts'> & { party: PartyEntity; accounts: AccountEntity[] };

// GET /console/v1/parties/:id/movements: each movement with its own fields.
type ConsoleMovementPage = z.infer<typeof consoleMovementPageSchema>;
export type MovementEntity = ConsoleMovementPage['data'][number] & z.infer<typeof movementDataSchema> & { normalized_amount: (Money & { fx?: unknown }) | null };
export type MovementPage = Omit<ConsoleMovementPage, 'data'> & { data: MovementEntity[] };
