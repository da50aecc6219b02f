// Resolves Java engines' runtime classpaths from Maven Central with Maven itself: a generated pom
// naming the coordinates, then `mvn -C dependency:copy-dependencies` into a directory of the cache.
// Maven does the transitive resolution (scopes, exclusions, version mediation) that a hand-written
// downloader would get wrong; -C makes it refuse any artifact whose .sha1/.md5 from the registry
// does not match. The local repository lives in the cache too, so one cache directory holds
// everything and deleting it is a clean start. A finished resolution writes its listing last: the
// next call reads it and runs no Maven at all (a warm `svc engines up` makes no network call).
import { execFile as execFileCallback } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withFileLock } from './file-lock.ts';
import { requireCommand } from './prerequisites.ts';

const execFile = promisify(execFileCallback);
// Pinned, like the engines: an unpinned plugin prefix resolves to whatever is newest that day.
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export interface MavenResolveOptions {
  // Maven's Java (JAVA_HOME for mvn); Maven's own default when unset.
  javaHome?: string;
  // File name → sha256 (hex) of artifacts that must be exactly these (versions.ts); checked after
  // download, before the cache entry is committed.
  sha256?: Record<string, string>;
  log?: (line: string) => void;
}

// `group:artifact:version` (or with :type and :classifier before the version; only jars go on
// the classpath). Returns the jar paths, sorted, for every coordinate and its runtime dependencies.
export async function resolveMavenClasspath(coordinates: string[], cacheDir: string, options: MavenResolveOptions = {}): Promise<string[]> {
  return withMavenLock(cacheDir, () => resolveClasspath(coordinates, cacheDir, options));
}

async function resolveClasspath(coordinates: string[], cacheDir: string, options: MavenResolveOptions): Promise<string[]> {
  const dir = entryDir(cacheDir, coordinates.join('\n'));
  const listing = join(dir, 'classpath.txt');
  const cached = await readFile(listing, 'utf8').catch(() => undefined);
  if (cached !== undefined) return cached.split('\n').filter(Boolean);

  options.log?.(`resolving ${coordinates.join(', ')} from Maven Central (once; cached in ${dir})`);
  const staging = await runMaven(cacheDir, dir, options, pom(coordinates), coordinates.join(', '), (at) => [
    `${DEPENDENCY_PLUGIN}:copy-dependencies`, `-DoutputDirectory=${join(at, 'lib')}`, '-DincludeScope=runtime',
  ]);
  const jars = (await readdir(join(staging, 'lib'))).filter((name) => name.endsWith('.jar')).sort();
  await verify(staging, join(staging, 'lib'), jars, options.sha256 ?? {});
  await commit(staging, dir);
  const paths = jars.map((name) => join(dir, 'lib', name));
  await writeFile(listing, `${paths.join('\n')}\n`);
  return paths;
}

// One artifact without its dependencies (an application archive), checked against its sha256
// pin, then unpacked (tar.gz): returns the unpacked directory in the cache. The archive itself is
// dropped once unpacked, from the staging directory and from Maven's local repository, so the
// cache holds the application once rather than three times.
export async function fetchMavenArchive(coordinate: string, sha256: string, cacheDir: string, options: Omit<MavenResolveOptions, 'sha256'> = {}): Promise<string> {
  return withMavenLock(cacheDir, () => fetchArchive(coordinate, sha256, cacheDir, options));
}

async function fetchArchive(coordinate: string, sha256: string, cacheDir: string, options: Omit<MavenResolveOptions, 'sha256'>): Promise<string> {
  const { group, artifact, version, type, classifier } = parse(coordinate);
  if (type !== 'tar.gz') throw new Error(`fetchMavenArchive unpacks tar.gz archives only, not ${coordinate}`);
  const dir = entryDir(cacheDir, coordinate);
  const name = `${artifact}-${version}${classifier ? `-${classifier}` : ''}.${type}`;
  const done = join(dir, 'verified');
  if (await readFile(done, 'utf8').then((text) => text.trim() === sha256, () => false)) return join(dir, 'unpacked');

  options.log?.(`fetching ${coordinate} from Maven Central (once; cached in ${dir})`);
  const staging = await runMaven(cacheDir, dir, options, pom([]), coordinate, (at) => [
    `${DEPENDENCY_PLUGIN}:copy`, `-Dartifact=${group}:${artifact}:${version}:${type}${classifier ? `:${classifier}` : ''}`, `-DoutputDirectory=${at}`,
  ]);
  await verify(staging, staging, [name], { [name]: sha256 });
  await mkdir(join(staging, 'unpacked'));
  await execFile('tar', ['-xzf', join(staging, name), '-C', join(staging, 'unpacked')], { maxBuffer: 16 * 1024 * 1024 });
  await rm(join(staging, name));
  await rm(join(cacheDir, 'm2', ...group.split('.'), artifact, version, name), { force: true });
  await commit(staging, dir);
  await writeFile(done, `${sha256}\n`);
  return join(dir, 'unpacked');
}

// One Maven run at a time on the cache's local repository, across processes (the test set-up
// starts engine sets side by side; two CLI invocations may run at once). Cache hits take it too:
// a hit read while another process commits the same entry would see it half moved.
async function withMavenLock<T>(cacheDir: string, run: () => Promise<T>): Promise<T> {
  await mkdir(cacheDir, { recursive: true });
  return withFileLock(join(cacheDir, '.maven.lock'), 'Maven Central downloads', run, 30 * 60_000);
}

function entryDir(cacheDir: string, key: string): string {
  return join(cacheDir, 'maven', createHash('sha256').update(key).digest('hex').slice(0, 16));
}

// Runs Maven on `pomText` in a fresh staging directory next to `dir` and returns that directory;
// a failure says whether the registry could not be reached or the coordinates did not resolve.
async function runMaven(cacheDir: string, dir: string, options: MavenResolveOptions, pomText: string, what: string, goal: (staging: string) => string[]): Promise<string> {
  await requireCommand('mvn', 'Apache Maven resolves the Java engines from Maven Central: install it (apt-get install maven)');
  const staging = `${dir}.partial`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  await writeFile(join(staging, 'pom.xml'), pomText);
  const env = { ...process.env, ...(options.javaHome ? { JAVA_HOME: options.javaHome } : {}) };
  const args = ['-B', '-q', '-C', `-Dmaven.repo.local=${join(cacheDir, 'm2')}`, '-f', join(staging, 'pom.xml'), ...goal(staging)];
  try {
    await execFile('mvn', args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 20 * 60_000 });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Maven's own first error line, without its colours and the boilerplate after it.
    const output = `${(error as { stdout?: string }).stdout ?? ''}\n${(error as { stderr?: string }).stderr ?? ''}`.replace(/\x1b\[[0-9;]*m/g, '');
    const lines = output
      .split('\n')
      .filter((line) => /ERROR|Could not|checksum/i.test(line) && !/\[Help 1\] http|re-run Maven|full stack trace|For more information|^\[ERROR\]\s*$/i.test(line))
      .map((line) => line.replace(/^\[ERROR\]\s*/, '').replace(/ -> \[Help 1\]$/, ''))
      .slice(0, 2)
      .join(' | ');
    const network = /Could not transfer|Unknown host|UnknownHost|Connection refused|timed out|Network is unreachable|No route to host/i.test(output);
    throw new Error(`${network ? 'Maven Central cannot be reached (network)' : 'Maven could not resolve'} ${what}: ${lines || (error as Error).message}`);
  }
  return staging;
}

// Every pinned file must be among `names` (in `dir`) with exactly its sha256; otherwise the
// staging directory goes and nothing reaches the cache.
async function verify(staging: string, dir: string, names: string[], pins: Record<string, string>): Promise<void> {
  for (const [name, expected] of Object.entries(pins)) {
    const actual = names.includes(name) ? createHash('sha256').update(await readFile(join(dir, name))).digest('hex') : undefined;
    if (actual === expected) continue;
    await rm(staging, { recursive: true, force: true });
    throw new Error(
      actual === undefined
        ? `pinned artifact ${name} was not among those Maven resolved (platform/local-engines/versions.ts out of step with the coordinates)`
        : `sha256 of ${name} is ${actual}, not the pinned ${expected} (platform/local-engines/versions.ts): refusing it`,
    );
  }
}

async function commit(staging: string, dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir);
}

// Aether's order: group:artifact[:type[:classifier]]:version.
function parse(coordinate: string): { group: string; artifact: string; version: string; type: string; classifier?: string } {
  const parts = coordinate.split(':');
  if (parts.length === 3) return { group: parts[0]!, artifact: parts[1]!, version: parts[2]!, type: 'jar' };
  if (parts.length === 4) return { group: parts[0]!, artifact: parts[1]!, type: parts[2]!, version: parts[3]! };
  if (parts.length === 5) return { group: parts[0]!, artifact: parts[1]!, type: parts[2]!, classifier: parts[3]!, version: parts[4]! };
  throw new Error(`not a Maven coordinate (group:artifact[:type[:classifier]]:version): ${coordinate}`);
}

function pom(coordinates: string[]): string {
  const dependencies = coordinates.map((coordinate) => {
    const { group, artifact, version, type, classifier } = parse(coordinate);
    const classified = classifier ? `<classifier>${classifier}</classifier>` : '';
    return `    <dependency><groupId>${group}</groupId><artifactId>${artifact}</artifactId><version>${version}</version><type>${type}</type>${classified}</dependency>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>svc.local-engines</groupId>
  <artifactId>resolve</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
${dependencies.join('\n')}
  </dependencies>
</project>
`;
}
