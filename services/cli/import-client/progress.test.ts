import { describe, expect, it } from 'vitest';
import { bytes, ProgressLine, renderLandingBar, renderUploadBar, renderUploadPlain } from './progress.ts';

function sink(isTTY: boolean, columns?: number) {
  const writes: string[] = [];
  return { stream: { isTTY, ...(columns ? { columns } : {}), write: (t: string) => writes.push(t) }, writes };
}

describe('progress', () => {
  const upload = { sentBytes: 1536 * 1024, totalBytes: 3 * 1024 * 1024, chunks: 2, elapsedMs: 2000 };

  it('renders the upload as a bar (bytes sent of the file, chunks, rate) and as a plain line', () => {
    expect(renderUploadBar(upload, 100)).toBe(`uploading [${'#'.repeat(20)}${'.'.repeat(20)}]  50% 1.5 MiB/3.0 MiB · 2 chunks · 768 KiB/s`);
    expect(renderUploadBar(upload, 50)).toBe('uploading  50% 1.5 MiB/3.0 MiB · 2 chunks · 768 KiB/s');
    expect(renderUploadPlain(upload)).toBe('uploaded 1.5 MiB of 3.0 MiB (50%), 2 chunks, 768 KiB/s');
    expect(renderLandingBar({ state: 'processing', chunksLanded: 1, chunkCount: 4, rowsRead: 10, accepted: 9, rejected: 1 }, 100)).toMatch(
      /^landing {3}\[#{10}\.{30}\] 1\/4 chunks · 10 rows \(9 accepted, 1 rejected\)$/,
    );
    expect([bytes(0), bytes(1023), bytes(1024), bytes(5 * 1024 * 1024 + 1)]).toEqual(['0 B', '1023 B', '1.0 KiB', '5.0 MiB']);
  });

  it('redraws one line on a terminal and keeps notes above it', () => {
    const { stream, writes } = sink(true, 120);
    const line = new ProgressLine(stream);
    line.show({ bar: () => 'one', plain: () => 'x' });
    line.show({ bar: () => 'two', plain: () => 'x' });
    line.note('retrying');
    line.done();
    expect(writes).toEqual(['\rone\x1b[K', '\rtwo\x1b[K', '\r\x1b[K', 'retrying\n']);
  });

  it('writes plain lines at most every interval, and the final state always', () => {
    let now = 0;
    const { stream, writes } = sink(false);
    const line = new ProgressLine(stream, 5000, () => now);
    const state = (n: number) => ({ bar: () => '', plain: () => `at ${n}` });
    line.show(state(1));
    now = 1000;
    line.show(state(2));
    now = 6000;
    line.show(state(3));
    now = 6500;
    line.show(state(4), true);
    expect(writes).toEqual(['at 1\n', 'at 3\n', 'at 4\n']);
  });
});
