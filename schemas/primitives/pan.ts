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
  // Fast exit: most strings hold fewer than 13 digits.
  let count = 0;
  for (let i = 0; i < text.length && count < MIN_DIGITS; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) count++;
  }
  if (count < MIN_DIGITS) return false;
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

// Paths (numeric array indices) of every string value in `value` that contains a PAN. A member
// NAME holding one is reported at the path of its object, so the number is never echoed.
export function findPans(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return containsPan(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => findPans(item, [...path, String(i)]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => (containsPan(key) ? [path] : findPans(item, [...path, key])));
  }
  return [];
}
