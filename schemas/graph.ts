import { relationshipDataSchema } from './families/relationship.ts';

// The vocabulary of the relationship network, shared by the graph store port and the public
// graph queries.

export const NODE_KINDS = ['party', 'account', 'instrument', 'identifier', 'device', 'ip'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

type RelationshipType = (typeof relationshipDataSchema.shape.type.options)[number];
const RELATIONSHIP_TYPES: readonly RelationshipType[] = relationshipDataSchema.shape.type.options;

// holds: party → account (the account's holder). uses: account (else party) → instrument it paid
// with. transfer: account → account, one edge per ordered pair. shares: party → identifier /
// device / ip (and instrument → fingerprint). Every relationship type of the spec is an edge type
// of its own.
export type EdgeType = 'holds' | 'uses' | 'transfer' | 'shares' | RelationshipType;
export const EDGE_TYPES: readonly EdgeType[] = ['holds', 'uses', 'transfer', 'shares', ...RELATIONSHIP_TYPES];
