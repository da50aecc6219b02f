// Card-number (PAN) detection. A candidate is a run of digit groups joined by single spaces or
// dashes; any consecutive groups holding 13-19 digits in total that pass the Luhn check are a PAN.
// Whole groups only: a 22-digit account number is not a card number just because 16 of its
// digits happen to pass Luhn, but "4111 1111 1111 1111 1234" still contains one.
const DIGIT_GROUPS = /\d+(?:[ -]\d+)*/g;
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

export function containsPan(text: string): boolean {
  if (!hasLongDigitRun(text)) return false;
  for (const match of text.matchAll(DIGIT_GROUPS)) {
    const groups = match[0].split(/[ -]/);
    for (let start = 0; start < groups.length; start++) {
      let digits = '';
      for (let end = start; end < groups.length; end++) {
        digits += groups[end];
        if (digits.length > MAX_DIGITS) break;
        if (digits.length >= MIN_DIGITS && luhnValid(digits)) return true;
      }
    }
  }
  return false;
}

// Whether some run of digit groups (what DIGIT_GROUPS matches) holds 13 digits or more: a PAN lies
// within one run, so a text without such a run holds none. Most do not (a date-time's longest run
// is its 8-digit date), and this loop spares them the pattern and its strings.
function hasLongDigitRun(text: string): boolean {
  let run = 0;
  // Whether the previous character was a separator directly after a digit.
  let joined = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run >= MIN_DIGITS) return true;
      joined = false;
    } else if ((c === 0x20 || c === 0x2d) && run > 0 && !joined) {
      joined = true;
    } else {
      run = 0;
      joined = false;
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
