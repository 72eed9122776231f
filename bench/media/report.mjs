// The media benchmark's table (markdown, one column per controller); --json prints the results instead.
const ms = (value) => (value === undefined ? '-' : `${value.toFixed(0)} ms`);
const us = (value) => (value === undefined ? '-' : value.toFixed(0));
const LABELS = {
  janus: 'Janus',
  'media-agent': 'agent',
  'runtime-registry': 'registry',
  'admin-gateway': 'gateway',
  'nats-server': 'NATS',
  'redis-server': 'Redis',
  postgres: 'PostgreSQL',
  'management-api': 'management-api',
};

function cpuCell(figures) {
  if (!figures) return '-';
  const parts = Object.entries(figures.usPerStreamSecond).map(([process, value]) => `${LABELS[process]} ${us(value)}`);
  const ratio =
    figures.ratio === undefined
      ? ''
      : `: **${figures.ratio.toFixed(2)}×** (all ${figures.ratioAll.toFixed(2)}×; without fixed costs ${figures.ratioAdded.toFixed(2)}×)`;
  return `${parts.join(', ')}${ratio}`;
}

function muteCell(figures) {
  if (!figures) return '-';
  const missed = figures.notSilenced ? `; **${figures.notSilenced} of ${figures.mutes} never silenced**` : '';
  return `${ms(figures.p50)} / ${ms(figures.p99)} (round trip ${ms(figures.roundTripP50)} / ${ms(figures.roundTripP99)})${missed}`;
}

export function printTable(results) {
  const names = results.options.controllers;
  const lines = [`| measure | ${names.join(' | ')} | goal |`, `|---|${names.map(() => '---|').join('')}---|`];
  const row = (measure, cell, goal = '') => lines.push(`| ${measure} | ${names.map(cell).join(' | ')} | ${goal} |`);
  const { join, cpu, moderate, capacity } = results;
  if (join) row('join to first RTP p50 / p99', (name) => `${ms(join[name]?.p50)} / ${ms(join[name]?.p99)}`);
  if (cpu)
    row(
      'CPU per forwarded stream (µs/s); ratio (Janus + agent + registry) / direct Janus',
      (name) => cpuCell(cpu[name]),
      '≤ 1.3×',
    );
  if (moderate)
    row('mute: last audio packet after the command p50 / p99', (name) => muteCell(moderate[name]), 'p99 < 500 ms');
  if (capacity)
    row('pairs held', (name) =>
      name === capacity.controller ? `${capacity.pairs} (stopped by: ${capacity.limit})` : '',
    );
  process.stdout.write(`${lines.join('\n')}\n`);
  if (results.idle) {
    const cores = Object.entries(results.idle)
      .filter(([name]) => name !== 'clients')
      .map(([name, value]) => `${LABELS[name] ?? name} ${(value * 1e6).toFixed(0)}`);
    process.stdout.write(`\nidle, no room (µs/s): ${cores.join(', ')}\n`);
  }
  if (capacity) {
    process.stdout.write(`\ncapacity steps (${capacity.controller}; cores of one CPU):\n`);
    for (const step of capacity.steps) {
      const cores = Object.entries(step.cores)
        .filter(([, value]) => value >= 0.005)
        .map(([name, value]) => `${name} ${value.toFixed(2)}`)
        .join(', ');
      process.stdout.write(
        `  ${step.pairs} pairs: loss ${(step.loss * 100).toFixed(2)} %, ${cores}, machine busy ${(step.systemBusy * 100).toFixed(0)} %\n`,
      );
    }
  }
}
