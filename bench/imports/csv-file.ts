import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { CSV_HEADER, csvLine, externalId, movementRow } from './movements.ts';
import { IMPORT_PREFIX } from './settings.ts';

// The generated file: written as a stream, and read back as upload chunks of whole lines.

const LINES_PER_WRITE = 5_000;

// Writes the header and `rows` rows to path; resolves with the file's size in bytes.
export async function writeMovementsCsv(path: string, rows: number, goLiveMs: number): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`${CSV_HEADER}\n`);
  for (let start = 0; start < rows; start += LINES_PER_WRITE) {
    let text = '';
    for (let n = start; n < Math.min(rows, start + LINES_PER_WRITE); n++) text += csvLine(externalId(IMPORT_PREFIX, n, rows), movementRow(n, rows, goLiveMs));
    await write(text);
  }
  out.end();
  await once(out, 'close');
  return bytes;
}

// The file in pieces of at most maxBytes, each ending at a line break (so each holds whole
// records: no field of this file spans lines). Reads maxBytes at a time into one buffer, so
// memory stays flat whatever the file's size; each piece yielded is a copy.
export async function* lineChunks(path: string, maxBytes: number): AsyncGenerator<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    let position = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, maxBytes, position);
      if (bytesRead === 0) return;
      let end = bytesRead;
      if (bytesRead === maxBytes) {
        end = buffer.lastIndexOf(0x0a, maxBytes - 1) + 1;
        if (end === 0) throw new Error(`a line of ${path} is longer than ${maxBytes} bytes`);
      }
      yield Buffer.from(buffer.subarray(0, end));
      position += end;
    }
  } finally {
    await file.close();
  }
}
