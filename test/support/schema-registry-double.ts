// A Confluent-compatible schema registry double: HTTP on 127.0.0.1, the part of the REST API that
// @kafkajs/confluent-schema-registry calls (and a little more), in memory. Avro only.
//
//   GET  /subjects                                   subject names
//   GET  /subjects/{subject}/versions                version numbers
//   GET  /subjects/{subject}/versions/{n|latest}     {subject, version, id, schema}
//   POST /subjects/{subject}/versions                register: {id}; the same schema again keeps
//                                                    its id; 409 when the subject's compatibility
//                                                    level refuses it, 422 when it is not Avro
//   POST /subjects/{subject}                         look a schema up: {subject, version, id, schema}
//   DELETE /subjects/{subject}                       the versions deleted
//   GET  /schemas/ids/{id}                           {schema}
//   GET|PUT /config                                  the global level (BACKWARD unless set)
//   GET|PUT /config/{subject}                        the subject's level; GET answers 404 (40408)
//                                                    while none is set, as Confluent's does
//   POST /compatibility/subjects/{subject}/versions/{n|latest}   {is_compatible}
//
// Schema ids are global and one schema text has one id across subjects, as in Confluent's. Two
// schemas are the same when their JSON is (whitespace aside). Compatibility is decided with avsc's
// schema resolution: BACKWARD means the new schema can read data written with the latest one (its
// resolver from the old one builds), FORWARD the reverse, FULL both; *_TRANSITIVE against every
// version; NONE never refuses. Errors are Confluent's shape: {error_code, message}.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import avro from 'avsc';

type CompatibilityLevel = 'NONE' | 'BACKWARD' | 'BACKWARD_TRANSITIVE' | 'FORWARD' | 'FORWARD_TRANSITIVE' | 'FULL' | 'FULL_TRANSITIVE';
const LEVELS = new Set<string>(['NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE']);

export interface SchemaRegistryDouble {
  url: string;
  // Method and path of every request served, in order.
  requests: string[];
  close: () => Promise<void>;
}

interface Version {
  version: number;
  id: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startSchemaRegistryDouble(): Promise<SchemaRegistryDouble> {
  const schemas: string[] = []; // id - 1 → normalised schema text
  const subjects = new Map<string, Version[]>();
  const subjectLevels = new Map<string, CompatibilityLevel>();
  let globalLevel: CompatibilityLevel = 'BACKWARD';
  const requests: string[] = [];

  const idOf = (text: string): number => {
    const existing = schemas.indexOf(text);
    if (existing >= 0) return existing + 1;
    schemas.push(text);
    return schemas.length;
  };
  const versionsOf = (subject: string): Version[] => {
    const versions = subjects.get(subject);
    if (!versions || versions.length === 0) throw new HttpError(404, 40401, `Subject '${subject}' not found.`);
    return versions;
  };
  const versionOf = (subject: string, which: string): Version => {
    const versions = versionsOf(subject);
    const found = which === 'latest' || which === '-1' ? versions[versions.length - 1] : versions.find((v) => v.version === Number(which));
    if (!found) throw new HttpError(404, 40402, `Version ${which} not found.`);
    return found;
  };
  const view = (subject: string, v: Version) => ({ subject, version: v.version, id: v.id, schema: schemas[v.id - 1]! });
  const levelOf = (subject: string): CompatibilityLevel => subjectLevels.get(subject) ?? globalLevel;
  // The versions a new schema must be compatible with, and whether it must be compatible with them.
  const compatible = (subject: string, text: string, against?: Version[]): boolean => {
    const level = levelOf(subject);
    const versions = against ?? subjects.get(subject) ?? [];
    if (level === 'NONE' || versions.length === 0) return true;
    const others = level.endsWith('_TRANSITIVE') ? versions : versions.slice(-1);
    const candidate = typeOf(text);
    return others.every((v) => {
      const old = typeOf(schemas[v.id - 1]!);
      const backward = () => resolves(candidate, old);
      const forward = () => resolves(old, candidate);
      if (level.startsWith('BACKWARD')) return backward();
      if (level.startsWith('FORWARD')) return forward();
      return backward() && forward();
    });
  };

  const routes: Array<[string, RegExp, (match: string[], body: unknown) => unknown]> = [
    ['GET', /^\/subjects$/, () => [...subjects].filter(([, v]) => v.length > 0).map(([s]) => s)],
    ['GET', /^\/subjects\/([^/]+)\/versions$/, ([s]) => versionsOf(s!).map((v) => v.version)],
    ['GET', /^\/subjects\/([^/]+)\/versions\/([^/]+)$/, ([s, v]) => view(s!, versionOf(s!, v!))],
    [
      'POST',
      /^\/subjects\/([^/]+)\/versions$/,
      ([subject], body) => {
        const text = normalise(body);
        const versions = subjects.get(subject!) ?? [];
        const same = versions.find((v) => schemas[v.id - 1] === text);
        if (same) return { id: same.id };
        if (!compatible(subject!, text)) {
          throw new HttpError(409, 409, `Schema being registered is incompatible with an earlier schema for subject "${subject}" (${levelOf(subject!)})`);
        }
        const id = idOf(text);
        versions.push({ version: (versions[versions.length - 1]?.version ?? 0) + 1, id });
        subjects.set(subject!, versions);
        return { id };
      },
    ],
    [
      'POST',
      /^\/subjects\/([^/]+)$/,
      ([subject], body) => {
        const text = normalise(body);
        const found = versionsOf(subject!).find((v) => schemas[v.id - 1] === text);
        if (!found) throw new HttpError(404, 40403, 'Schema not found');
        return view(subject!, found);
      },
    ],
    [
      'DELETE',
      /^\/subjects\/([^/]+)$/,
      ([subject]) => {
        const versions = versionsOf(subject!);
        subjects.delete(subject!);
        return versions.map((v) => v.version);
      },
    ],
    [
      'GET',
      /^\/schemas\/ids\/(\d+)$/,
      ([id]) => {
        const schema = schemas[Number(id) - 1];
        if (schema === undefined) throw new HttpError(404, 40403, 'Schema not found');
        return { schema };
      },
    ],
    ['GET', /^\/config$/, () => ({ compatibilityLevel: globalLevel })],
    [
      'PUT',
      /^\/config$/,
      (_, body) => {
        globalLevel = level(body);
        return { compatibility: globalLevel };
      },
    ],
    [
      'GET',
      /^\/config\/([^/]+)$/,
      ([subject]) => {
        const set = subjectLevels.get(subject!);
        if (!set) throw new HttpError(404, 40408, `Subject '${subject}' does not have subject-level compatibility configured`);
        return { compatibilityLevel: set };
      },
    ],
    [
      'PUT',
      /^\/config\/([^/]+)$/,
      ([subject], body) => {
        const chosen = level(body);
        subjectLevels.set(subject!, chosen);
        return { compatibility: chosen };
      },
    ],
    [
      'POST',
      /^\/compatibility\/subjects\/([^/]+)\/versions\/([^/]+)$/,
      ([subject, which], body) => {
        const text = normalise(body);
        const against = which === 'latest' ? undefined : [versionOf(subject!, which!)];
        return { is_compatible: compatible(subject!, text, against) };
      },
    ],
  ];

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://registry').pathname;
    requests.push(`${req.method} ${path}`);
    let status = 200;
    let payload: unknown;
    try {
      const text = await readBody(req);
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        throw new HttpError(400, 400, 'the body is not JSON');
      }
      const route = routes.find(([method, pattern]) => method === req.method && pattern.test(path));
      if (!route) throw new HttpError(404, 404, `no route ${req.method} ${path}`);
      const match = route[1].exec(path)!.slice(1).map(decodeURIComponent);
      payload = route[2](match, body);
    } catch (error) {
      const e = error instanceof HttpError ? error : new HttpError(500, 50001, (error as Error).message);
      status = e.status;
      payload = { error_code: e.code, message: e.message };
    }
    res.writeHead(status, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
    res.end(JSON.stringify(payload));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// A request body's members; none when it is not a JSON object.
const memberOf = (body: unknown): Record<string, unknown> => (typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {});

// The schema of a registration body, as compact JSON; 422 unless it is an Avro schema avsc parses.
function normalise(body: unknown): string {
  const { schema, schemaType } = memberOf(body);
  if (typeof schema !== 'string') throw new HttpError(422, 42201, 'Either the input schema or one of its references is invalid');
  if (schemaType !== undefined && schemaType !== 'AVRO') throw new HttpError(422, 42201, `the double serves Avro only, not ${String(schemaType)}`);
  try {
    const parsed = JSON.parse(schema);
    typeOf(JSON.stringify(parsed));
    return JSON.stringify(parsed);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(422, 42201, `Invalid schema: ${(error as Error).message}`);
  }
}

function level(body: unknown): CompatibilityLevel {
  const { compatibility } = memberOf(body);
  const chosen = String(compatibility ?? '').toUpperCase();
  if (!LEVELS.has(chosen)) throw new HttpError(422, 42203, `Invalid compatibility level: ${String(compatibility)}`);
  return chosen as CompatibilityLevel;
}

function typeOf(text: string): avro.Type {
  return avro.Type.forSchema(JSON.parse(text), { wrapUnions: 'auto' });
}

// The reader can read what the writer wrote.
function resolves(reader: avro.Type, writer: avro.Type): boolean {
  try {
    reader.createResolver(writer);
    return true;
  } catch {
    return false;
  }
}
