// Card-number (PAN) detection. A candidate is a run of digit groups joined by short runs of
// separators (spaces, tabs, dashes, slashes, underscores, dots: how numbers are written, pasted
// from a PDF or a spreadsheet); any consecutive groups holding 13-19 digits in total that pass the
// Luhn check are a PAN. Text outside ASCII is compared in NFKC form first, so full-width digits
// and no-break or ideographic spaces count as digits and spaces. Whole groups only: a 22-digit
// account number is not a card number just because 16 of its digits happen to pass Luhn, but
// "4111 1111 1111 1111 1234" still contains one. Dots join groups only when they alone do, in a
// card-like run of three groups or more (dottedCard).
const SEPARATORS = '[ \\t\\-/_.]';
const DIGIT_GROUPS = new RegExp(`\\d+(?:${SEPARATORS}{1,3}\\d+)*`, 'g');
const SEPARATOR_RUN = new RegExp(`${SEPARATORS}+`);
const MAX_SEPARATOR_RUN = 3;
const NON_ASCII = /[^\u0000-\u007f]/;
const MIN_DIGITS = 13;
const MAX_DIGITS = 19;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

export function containsPan(given: string): boolean {
  const text = NON_ASCII.test(given) ? given.normalize('NFKC') : given;
  if (!hasLongDigitRun(text)) return false;
  for (const [match] of text.matchAll(DIGIT_GROUPS)) {
    for (const run of dottedCard(match) ? [match] : match.split('.')) if (holdsPan(run.split(SEPARATOR_RUN))) return true;
  }
  return false;
}

// Dots join digit groups only as a card number is written with them (4111.1111.1111.1111: dots
// alone, single, three groups or more). Anywhere else a dot is a decimal point, or the point of a
// time's fraction of a second (12:00:59.999999999-05:00), and the digits on either side are
// judged apart.
function dottedCard(run: string): boolean {
  if (!run.includes('.')) return true;
  return /^\d+(?:\.\d+){2,}$/.test(run);
}

// Whether some consecutive groups hold 13-19 digits that pass Luhn.
function holdsPan(groups: readonly string[]): boolean {
  for (let start = 0; start < groups.length; start++) {
    let digits = '';
    for (let end = start; end < groups.length; end++) {
      digits += groups[end];
      if (digits.length > MAX_DIGITS) break;
      if (digits.length >= MIN_DIGITS && luhnValid(digits)) return true;
    }
  }
  return false;
}

const isSeparator = (c: number) => c === 0x20 || c === 0x09 || c === 0x2d || c === 0x2f || c === 0x5f || c === 0x2e;

// Whether some run of digit groups (what DIGIT_GROUPS matches) holds 13 digits or more: a PAN lies
// within one run, so a text without such a run holds none. Most do not (a date-time's longest run
// is its 8-digit date), and this loop spares them the pattern and its strings.
function hasLongDigitRun(text: string): boolean {
  let run = 0;
  // Separators since the last digit of the run.
  let gap = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run >= MIN_DIGITS) return true;
      gap = 0;
    } else if (isSeparator(c) && run > 0 && gap < MAX_SEPARATOR_RUN) {
      gap++;
    } else {
      run = 0;
      gap = 0;
    }
  }
  return false;
}

// A money value as the wire carries it: a signed integer of minor units.
const MINOR_UNITS = /^-?\d+$/;

// Paths (numeric array indices) of every string value in `value` that contains a PAN. A member
// NAME holding one is reported at the path of its object, so the number is never echoed.
// `money`: the item's money objects, whose `value`, when it is an integer of minor units, is a
// quantity and not scanned (decision 0060): 13 to 19 digits are everyday amounts of an asset of
// high scale, and one in ten of them passes Luhn.
// Runs on every ingested item, so the walk keeps one path stack and copies it only on a hit.
export function findPans(value: unknown, path: string[] = [], money: ReadonlySet<unknown> = NO_MONEY): string[][] {
  const found: string[][] = [];
  walk(value, [...path], found, money);
  return found;
}

const NO_MONEY: ReadonlySet<unknown> = new Set();

function walk(value: unknown, path: string[], found: string[][], money: ReadonlySet<unknown>): void {
  if (typeof value === 'string') {
    if (containsPan(value)) found.push([...path]);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(String(i));
      walk(value[i], path, found, money);
      path.pop();
    }
  } else if (value !== null && typeof value === 'object') {
    const isMoney = money.has(value);
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (containsPan(key)) {
        found.push([...path]);
        continue;
      }
      const member = (value as Record<string, unknown>)[key];
      if (isMoney && key === 'value' && typeof member === 'string' && MINOR_UNITS.test(member)) continue;
      path.push(key);
      walk(member, path, found, money);
      path.pop();
    }
  }
}
