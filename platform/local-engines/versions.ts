// Every artifact `svc engines up` fetches, pinned here and nowhere else. A TypeScript constant
// rather than a JSON file: the type checker sees every engine read its pins, and each pin carries
// the comment saying why it is that version (JSON has no comments).
//
// Verification is two-fold. Maven runs with -C (strict checksums): an artifact whose .sha1 from
// Maven Central does not match is refused. That only proves the transfer; the sha256 pins below
// prove the artifact is the one reviewed here, so a re-published or tampered coordinate fails even
// with a matching .sha1. They are checked once, after download, before the cache entry is
// committed (maven.ts); a mismatch leaves nothing in the cache. To move a version: change it here,
// run `svc engines up` on an empty SVC_ENGINES_CACHE, read the mismatch error's actual sha256,
// check it against the project's published one, then pin it.

export const KAFKA = {
  // The same as infra/compose/docker-compose.yml's apache/kafka:3.9.0. Not 4.x: kafkajs 2.2.4, our
  // client, speaks protocol versions Kafka 4 removed.
  version: '3.9.0',
  coordinates: [
    'org.apache.kafka:kafka_2.13:3.9.0',
    // The broker logs through log4j 1's API; the binary distribution ships reload4j and its slf4j
    // binding in libs/, the Maven pom leaves the choice to the user.
    'ch.qos.reload4j:reload4j:1.2.25',
    'org.slf4j:slf4j-reload4j:1.7.36',
  ],
  sha256: {
    'kafka_2.13-3.9.0.jar': '805d28d77fe36da8ae837867b799c3f4424592b2dd0c308ef4f28de31458bf19',
    'kafka-clients-3.9.0.jar': '15c1e137f2c2c94398e27abc4060a03b6bde10bf9fac15e8f70c02320b202f18',
    'kafka-server-3.9.0.jar': 'af7388a986fe60fc488a8684a8a1eaaad79df73407de542529136ae940431e22',
    'kafka-server-common-3.9.0.jar': '6a5e80ad03dc651dc8eef1e04569916c44c2f89231acf4ab69d64f093425ad72',
    'kafka-metadata-3.9.0.jar': 'fe78885f72095c8fe3bbc7a2758386990dab205fe30d895e3504334aab04541c',
    'kafka-raft-3.9.0.jar': '7a59face37103f1f572f9b8dfc5bb33bcdc431619f0a9c7618d85b8c5ac10c79',
    'kafka-storage-3.9.0.jar': 'ef3c44838af30445ff5887105fe2558d2195f024e8bfb7d8d9b8443714ca37da',
    'kafka-group-coordinator-3.9.0.jar': '624121f05f4f074840fc7e35c9dd1815fa102f37571345825708adc04683e74d',
    'kafka-transaction-coordinator-3.9.0.jar': 'ccfe499af94fe4cc4ebc7825c12f8dccddfdcfc126f5149599629e453e00eaad',
  } as Record<string, string>,
  // The 3.9 broker runs on Java 17, the machine's default.
  javaMajor: 17,
} as const;

export const SCHEMA_REGISTRY = {
  // Apicurio Registry through its Confluent-compatible API (docs/decisions/0020-local-engines.md).
  // Maven Central serves the release's built Quarkus application (the fast-jar layout the project's
  // own images run) as the `all` tar.gz of apicurio-registry-app; the plain jar is not runnable.
  version: '3.3.3',
  coordinate: 'io.apicurio:apicurio-registry-app:tar.gz:all:3.3.3',
  sha256: '8bc6751c76d963734224b01d5e7f84ccb3cb61c87d3bd77c36c35f10a5cbed63',
  // Compiled for Java 21 (class file 65): Java 17 refuses it.
  javaMajor: 21,
} as const;

export const CLICKHOUSE = {
  // Debian's clickhouse-server package (bookworm: 18.16), installed with apt-get when no ClickHouse
  // binary is present; apt verifies it against the signed archive. Not pinned further: Debian
  // ships one version per release. An upstream `clickhouse` binary found on PATH is used instead.
  debianPackage: 'clickhouse-server',
} as const;
