// The web app (console/web) type-checks the console's schemas without Node's types: the one Node
// module the schemas reach (schemas/primitives/fields.ts validates IP addresses) is declared here
// for that check only. The server's own check uses @types/node.
declare module 'node:net' {
  export function isIP(input: string): number;
}
