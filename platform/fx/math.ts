// Money conversion in exact integer arithmetic: minor units and decimal rates as BigInt, rounded
// once, half to even. Never a float.

export interface ConversionInput {
  // Minor units of the source asset and its scale.
  value: bigint;
  fromScale: number;
  toScale: number;
  // The rate as an integer and its decimal places: 1.0825 is rate 10825, rateScale 4.
  rate: bigint;
  rateScale: number;
  // direct: 1 from = rate to. inverse: 1 to = rate from.
  direction: 'direct' | 'inverse';
}

const TEN = 10n;

export function convert(input: ConversionInput): bigint {
  const { value, fromScale, toScale, rate, rateScale } = input;
  // direct:  value * rate * 10^toScale / (10^rateScale * 10^fromScale)
  // inverse: value * 10^rateScale * 10^toScale / (rate * 10^fromScale)
  const numerator =
    input.direction === 'direct' ? value * rate * TEN ** BigInt(toScale) : value * TEN ** BigInt(rateScale) * TEN ** BigInt(toScale);
  const denominator =
    input.direction === 'direct' ? TEN ** BigInt(rateScale) * TEN ** BigInt(fromScale) : rate * TEN ** BigInt(fromScale);
  return divideHalfEven(numerator, denominator);
}

export function divideHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  if (denominator < 0n) return divideHalfEven(-numerator, -denominator);
  const negative = numerator < 0n;
  const n = negative ? -numerator : numerator;
  let quotient = n / denominator;
  const twice = (n % denominator) * 2n;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) quotient += 1n;
  return negative ? -quotient : quotient;
}

// "1.0825" with scale 4 → 10825n. The text has at most `scale` decimals (checked on load).
export function decimalToScaled(text: string, scale: number): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(`${whole}${fraction.padEnd(scale, '0')}`);
}
