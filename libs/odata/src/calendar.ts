/**
 * Proleptic Gregorian calendar arithmetic on Unix-epoch milliseconds with bigint (astronomical
 * year numbering: year 0 = 1 BC, like JavaScript's Date), after Howard Hinnant's `days_from_civil`
 * and `civil_from_days`. The SQL translator emits the same arithmetic, so both agree on every value.
 */

export const MS_PER_DAY = 86_400_000n;

/** Floor division and modulo (result has the sign of the divisor). */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

export function floorMod(a: bigint, b: bigint): bigint {
  return ((a % b) + b) % b;
}

export function daysFromCivil(year: bigint, month: bigint, day: bigint): bigint {
  const y = month <= 2n ? year - 1n : year;
  const era = floorDiv(y, 400n);
  const yoe = y - era * 400n;
  const mp = month > 2n ? month - 3n : month + 9n;
  const doy = (153n * mp + 2n) / 5n + day - 1n;
  const doe = yoe * 365n + yoe / 4n - yoe / 100n + doy;
  return era * 146097n + doe - 719468n;
}

export interface CivilDate {
  year: bigint;
  month: bigint;
  day: bigint;
}

export function civilFromDays(days: bigint): CivilDate {
  const z = days + 719468n;
  const era = floorDiv(z, 146097n);
  const doe = z - era * 146097n;
  const yoe = (doe - doe / 1460n + doe / 36524n - doe / 146096n) / 365n;
  const y = yoe + era * 400n;
  const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
  const mp = (5n * doy + 2n) / 153n;
  const day = doy - (153n * mp + 2n) / 5n + 1n;
  const month = mp < 10n ? mp + 3n : mp - 9n;
  return { year: month <= 2n ? y + 1n : y, month, day };
}

export type DatePart = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second';

export function datePart(part: DatePart, ms: bigint): bigint {
  switch (part) {
    case 'hour':
      return floorMod(ms, MS_PER_DAY) / 3_600_000n;
    case 'minute':
      return floorMod(ms, 3_600_000n) / 60_000n;
    case 'second':
      return floorMod(ms, 60_000n) / 1000n;
    case 'year':
    case 'month':
    case 'day': {
      const civil = civilFromDays(floorDiv(ms, MS_PER_DAY));
      return civil[part];
    }
  }
}

export function daysInMonth(year: bigint, month: bigint): number {
  if (month === 2n) {
    const leap = (year % 4n === 0n && year % 100n !== 0n) || year % 400n === 0n;
    return leap ? 29 : 28;
  }
  return [4n, 6n, 9n, 11n].includes(month) ? 30 : 31;
}
