// A small XML writer: documents are trees of elements built in code and serialised here, the only
// place text becomes markup. Every text is escaped; characters XML 1.0 cannot carry at all
// (control characters, lone surrogates, U+FFFE/U+FFFF) become U+FFFD rather than a document no
// parser accepts. Element names are ours, never input: a bad one is a bug and throws.

export type XmlNode = { name: string; text: string } | { name: string; children: XmlNode[] };

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
// Allowed XML 1.0 chars: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function checkName(name: string): string {
  if (!NAME.test(name)) throw new Error(`not an XML element name: ${JSON.stringify(name)}`);
  return name;
}

export function leaf(name: string, text: string | number | bigint | boolean): XmlNode {
  return { name: checkName(name), text: String(text) };
}

// Children that are undefined, null or false are left out: optional elements read as
// `cond && leaf(...)` at the call site.
export function el(name: string, ...children: Array<XmlNode | XmlNode[] | undefined | null | false>): XmlNode {
  const kept: XmlNode[] = [];
  for (const child of children) {
    if (Array.isArray(child)) kept.push(...child);
    else if (child) kept.push(child);
  }
  return { name: checkName(name), children: kept };
}

// Text content: & and < always, > too (so "]]>" never appears), and CR as a reference so a
// parser's line-end normalisation cannot turn it into LF.
export function escapeText(text: string): string {
  return text
    .replace(NOT_XML_CHAR, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r/g, '&#13;');
}

// The document, UTF-8, indented by two spaces; text-only elements on one line, so the
// whitespace of a text is exactly its own.
export function renderXml(root: XmlNode): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  const write = (node: XmlNode, depth: number) => {
    const pad = '  '.repeat(depth);
    if ('text' in node) {
      out.push(`${pad}<${node.name}>${escapeText(node.text)}</${node.name}>\n`);
    } else if (node.children.length === 0) {
      out.push(`${pad}<${node.name}/>\n`);
    } else {
      out.push(`${pad}<${node.name}>\n`);
      for (const child of node.children) write(child, depth + 1);
      out.push(`${pad}</${node.name}>\n`);
    }
  };
  write(root, 0);
  return out.join('');
}
