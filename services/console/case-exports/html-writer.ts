// HTML built with a tagged template that escapes every interpolated value: markup is only what
// the template literals of our own code say; anything else (names, notes, narratives) is text.
// A value already built by `html` is kept as markup; arrays are joined.

const MARKUP = Symbol('markup');

export interface Markup {
  readonly [MARKUP]: string;
}

type Value = Markup | string | number | bigint | boolean | null | undefined | readonly Value[];

const NOT_HTML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function escapeHtml(text: string): string {
  return text
    .replace(NOT_HTML_CHAR, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const isMarkup = (value: unknown): value is Markup => typeof value === 'object' && value !== null && MARKUP in value;

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (isMarkup(value)) return value[MARKUP];
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return { [MARKUP]: out };
}

export const markupText = (markup: Markup): string => markup[MARKUP];
