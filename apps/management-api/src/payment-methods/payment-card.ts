/**
 * Payment cards: the number and the security code are checked and then dropped. What is kept is
 * the masked number (last four digits), the brand (derived from the number's IIN when not given),
 * the expiry, the holder's name and the billing address.
 */
import type { PaymentCard } from '@switchboard/contracts';
import { invalid } from '../common/bodies.js';

/** The card as stored and returned: never `number` nor `securityCode`. */
export type StoredCard = Omit<PaymentCard, 'number' | 'securityCode'>;

/** Luhn checksum of a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const within = (prefix: number, low: number, high: number) => prefix >= low && prefix <= high;

/** Card brand from the issuer identification number (leading digits). */
export function cardBrand(digits: string): string {
  const p = (n: number) => Number(digits.slice(0, n));
  if (digits.startsWith('4')) return 'Visa';
  if (within(p(2), 51, 55) || within(p(4), 2221, 2720)) return 'Mastercard';
  if (p(2) === 34 || p(2) === 37) return 'American Express';
  if (p(4) === 6011 || within(p(3), 644, 649) || p(2) === 65) return 'Discover';
  if (within(p(4), 3528, 3589)) return 'JCB';
  if (within(p(3), 300, 305) || p(2) === 36 || p(2) === 38 || p(2) === 39) return 'Diners Club';
  if (p(2) === 62) return 'UnionPay';
  if (p(2) === 50 || within(p(2), 56, 58) || p(2) === 67 || p(4) === 6304) return 'Maestro';
  return 'Unknown';
}

/** `************1234`: one `*` per hidden digit, then the last four. */
export function maskNumber(digits: string): string {
  return `${'*'.repeat(Math.max(0, digits.length - 4))}${digits.slice(-4)}`;
}

/** Digits of a card number as typed (spaces and dashes allowed); a 400 when it is not a plausible card number. */
export function cardDigits(number: string, field = 'card.number'): string {
  const digits = number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) throw invalid(field, 'must be 12 to 19 digits');
  if (!luhnValid(digits)) throw invalid(field, 'is not a valid card number (checksum)');
  return digits;
}

/**
 * The card to store from a request's card. A new `number` sets `maskedNumber` and, unless `brand`
 * is given, the brand; without a number the previous card's `maskedNumber` (and brand, unless
 * given) stay: a card whose number was never given has no masked number. A client-sent
 * `maskedNumber` is ignored.
 */
export function storedCard(input: PaymentCard | undefined, previous: StoredCard | null): StoredCard {
  const card = input ?? {};
  const { number, securityCode, maskedNumber: _ignored, brand, ...rest } = card;
  if (securityCode !== undefined && !/^\d{3,4}$/.test(securityCode))
    throw invalid('card.securityCode', 'must be 3 or 4 digits');
  const out: StoredCard = { ...rest };
  if (number !== undefined) {
    const digits = cardDigits(number);
    out.maskedNumber = maskNumber(digits);
    out.brand = brand ?? cardBrand(digits);
  } else {
    if (previous?.maskedNumber !== undefined) out.maskedNumber = previous.maskedNumber;
    const keptBrand = brand ?? previous?.brand;
    if (keptBrand !== undefined) out.brand = keptBrand;
  }
  return out;
}
