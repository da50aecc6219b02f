// The JDK Neo4j 5.26 runs on. It supports Java 17 and 21 only: on a newer one it starts, but logs
// "You are using an unsupported version of the Java runtime" (seen on Temurin 25). So a 17–21 JDK
// is preferred wherever the machine has one (JAVA_HOME, `java` on PATH, /usr/lib/jvm), and a newer
// one is used, with a warning, only when there is nothing else.
import { join } from 'node:path';
import { javaHomes, javaMajor, requireJava } from './prerequisites.ts';

const SUPPORTED = { min: 17, max: 21 };

export async function neo4jJava(log: (line: string) => void): Promise<string> {
  for (const home of await javaHomes()) {
    const major = await javaMajor(join(home, 'bin', 'java'));
    if (major !== undefined && major >= SUPPORTED.min && major <= SUPPORTED.max) return home;
  }
  // None in range: requireJava takes a newer one, or says what it found.
  const home = await requireJava(SUPPORTED.min, 'Neo4j');
  log(`no Java ${SUPPORTED.min}–${SUPPORTED.max} found; running on ${home}, which Neo4j 5.26 does not support`);
  return home;
}
