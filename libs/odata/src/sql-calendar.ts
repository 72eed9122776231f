/** Calendar parts of epoch milliseconds in PostgreSQL, computed arithmetically like calendar.ts. */

export type CivilPart = 'year' | 'month' | 'day';

/**
 * Year, month or day of `epochMs` (SQL of an integer) by Hinnant's civil_from_days: proleptic
 * Gregorian, no timestamp range errors. `alias` prefixes the derived tables' aliases.
 */
export function civilPartSql(part: CivilPart, epochMs: string, alias: string): string {
  const [input, days, era, dayOfEra, yearOfEra, dayOfYear, shiftedMonth, month] = [
    'ms',
    'days',
    'era',
    'doe',
    'yoe',
    'doy',
    'mp',
    'month',
  ].map((name) => `${alias}${name}`);
  const result =
    part === 'year'
      ? `${yearOfEra}.yoe + ${era}.era * 400 + (CASE WHEN ${month}.m <= 2 THEN 1 ELSE 0 END)`
      : part === 'month'
        ? `${month}.m`
        : `${dayOfYear}.doy - div(153 * ${shiftedMonth}.mp + 2, 5) + 1`;
  return (
    `(SELECT ${result} FROM (SELECT ${epochMs} AS ms) AS ${input}` +
    `, LATERAL (SELECT div(${input}.ms - mod(mod(${input}.ms, 86400000) + 86400000, 86400000), 86400000)` +
    ` + 719468 AS z) AS ${days}` +
    `, LATERAL (SELECT div(${days}.z - mod(mod(${days}.z, 146097) + 146097, 146097), 146097) AS era) AS ${era}` +
    `, LATERAL (SELECT ${days}.z - ${era}.era * 146097 AS doe) AS ${dayOfEra}` +
    `, LATERAL (SELECT div(${dayOfEra}.doe - div(${dayOfEra}.doe, 1460) + div(${dayOfEra}.doe, 36524)` +
    ` - div(${dayOfEra}.doe, 146096), 365) AS yoe) AS ${yearOfEra}` +
    `, LATERAL (SELECT ${dayOfEra}.doe - (365 * ${yearOfEra}.yoe + div(${yearOfEra}.yoe, 4)` +
    ` - div(${yearOfEra}.yoe, 100)) AS doy) AS ${dayOfYear}` +
    `, LATERAL (SELECT div(5 * ${dayOfYear}.doy + 2, 153) AS mp) AS ${shiftedMonth}` +
    `, LATERAL (SELECT CASE WHEN ${shiftedMonth}.mp < 10 THEN ${shiftedMonth}.mp + 3` +
    ` ELSE ${shiftedMonth}.mp - 9 END AS m) AS ${month})`
  );
}
