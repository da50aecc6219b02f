// A throwaway certificate authority and a server certificate it signed, made at test time so that
// no key material lives in the repository and no test needs the openssl binary. Clients trust the
// server by passing `ca: caPem`; nothing relaxes verification (no rejectUnauthorized: false), so
// a test that connects proves the real chain and host-name checks pass.
import { randomBytes } from 'node:crypto';
import { generate } from 'selfsigned';

export interface TestCertificate {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const HOUR_MS = 60 * 60 * 1000;

// Valid from an hour ago (a machine whose clock lags a little still accepts it) for a week (longer
// than any benchmark run). EC P-256 keys take milliseconds to make, unlike 2048-bit RSA.
function validity(): { notBeforeDate: Date; notAfterDate: Date } {
  const now = Date.now();
  return { notBeforeDate: new Date(now - HOUR_MS), notAfterDate: new Date(now + 7 * 24 * HOUR_MS) };
}

export async function makeTestCertificate(): Promise<TestCertificate> {
  // A random suffix keeps two CAs from one run distinct by name (chain building goes by name).
  const caName = `svc test CA ${randomBytes(4).toString('hex')}`;
  const ca = await generate([{ name: 'commonName', value: caName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ...validity(),
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ...validity(),
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      // Clients check host names against these, not the common name.
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  return { caPem: ca.cert, certPem: server.cert, keyPem: server.private };
}
