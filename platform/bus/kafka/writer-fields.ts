// The fields a record written with one Avro schema holds that a reader with another would drop.
// avsc's resolver reads a writer's record with the reader's schema and skips, without a word, every
// writer field the reader does not have: a consumer still on an older schema (a rolling deploy
// that upgraded the writers first) would lose those members from the canonical model, where the
// spec says the service never drops a field. The codec refuses to read such records instead, as
// a passing condition (avro-codec.ts): the consumer waits for its own upgrade.
import type avro from 'avsc';

interface Field {
  name: string;
  type: avro.Type;
  aliases?: string[];
}

interface Shaped {
  typeName: string;
  branchName?: string;
  fields?: Field[];
  types?: avro.Type[];
  itemsType?: avro.Type;
  valuesType?: avro.Type;
}

// Paths (`data.new_member`, `data.legs[].extra`) of the writer's fields the reader cannot hold.
export function fieldsReaderWouldDrop(writer: avro.Type, reader: avro.Type, path = ''): string[] {
  const w = writer as unknown as Shaped;
  const r = reader as unknown as Shaped;
  if (w.typeName.startsWith('union')) return (w.types ?? []).flatMap((branch) => fieldsReaderWouldDrop(branch, reader, path));
  if (r.typeName.startsWith('union')) {
    const match = (r.types ?? []).find((branch) => (branch as unknown as Shaped).branchName === w.branchName);
    return match ? fieldsReaderWouldDrop(writer, match, path) : [];
  }
  if (w.typeName === 'record' && r.typeName === 'record') {
    return (w.fields ?? []).flatMap((field) => {
      const at = path ? `${path}.${field.name}` : field.name;
      const own = (r.fields ?? []).find((candidate) => candidate.name === field.name || candidate.aliases?.includes(field.name));
      return own ? fieldsReaderWouldDrop(field.type, own.type, at) : [at];
    });
  }
  if (w.typeName === 'array' && r.typeName === 'array') return fieldsReaderWouldDrop(w.itemsType!, r.itemsType!, `${path}[]`);
  if (w.typeName === 'map' && r.typeName === 'map') return fieldsReaderWouldDrop(w.valuesType!, r.valuesType!, `${path}{}`);
  return [];
}
