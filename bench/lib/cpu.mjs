// CPU time and read/write system calls of processes from /proc (Linux): where the CPU of a
// benchmark phase went, per process and per request.
import fs from 'node:fs';

const TICKS_PER_SECOND = 100;

/** Read/write system calls so far (NaN when /proc/<pid>/io is not readable, as for another user's process). */
function syscalls(pid) {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    const count = (name) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)?.[1] ?? NaN);
    return count('syscr') + count('syscw');
  } catch {
    return NaN;
  }
}

function sample(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 (1-based) of the whole line.
    const user = Number(fields[11]) / TICKS_PER_SECOND;
    const cpu = user + Number(fields[12]) / TICKS_PER_SECOND;
    return { cpu, user, syscalls: syscalls(pid) };
  } catch {
    return { cpu: NaN, user: NaN, syscalls: NaN };
  }
}

/** The change of one process's sample, or the sum over the processes of a group alive at both ends. */
function delta(before, now) {
  if (!Array.isArray(before))
    return { cpu: now.cpu - before.cpu, user: now.user - before.user, syscalls: now.syscalls - before.syscalls };
  const total = { cpu: 0, user: 0, syscalls: 0 };
  before.forEach((start, i) => {
    if (!Number.isFinite(start.cpu) || !Number.isFinite(now[i].cpu)) return;
    for (const field of Object.keys(total)) total[field] += now[i][field] - start[field];
  });
  return total;
}

/**
 * Starts measuring `pids` ({ name: pid }; a pid may also be a function answering a list of pids,
 * counted as one process, e.g. a PostgreSQL server and its backends, taken when the measure starts).
 * `stop(requests)` answers, per process, the cores used
 * and the CPU µs and read/write system calls per request meanwhile (`{ name: { cores, usPerRequest,
 * syscallsPerRequest } }`); `usage(requests)` the raw usage (CPU seconds, user CPU seconds and
 * system calls per process, wall seconds, requests) for `addUsage` and `formatCpu`.
 */
export function cpuMeter(pids) {
  const fixed = Object.entries(pids).map(([name, pid]) => [name, typeof pid === 'function' ? pid() : pid]);
  const take = (pid) => (Array.isArray(pid) ? pid.map(sample) : sample(pid));
  const before = Object.fromEntries(fixed.map(([name, pid]) => [name, take(pid)]));
  const started = Date.now();
  const usage = (requests) => {
    const processes = {};
    for (const [name, pid] of fixed) processes[name] = delta(before[name], take(pid));
    return { seconds: (Date.now() - started) / 1000, requests, processes };
  };
  return {
    usage,
    stop(requests) {
      const u = usage(requests);
      return Object.fromEntries(
        Object.entries(u.processes).map(([name, p]) => [
          name,
          {
            cores: p.cpu / u.seconds,
            usPerRequest: requests ? (p.cpu * 1e6) / requests : NaN,
            syscallsPerRequest: requests ? p.syscalls / requests : NaN,
          },
        ]),
      );
    },
  };
}

/** Sums usages (of the rounds of one target). */
export function addUsage(a, b) {
  if (!a) return b;
  if (!b) return a;
  const processes = { ...a.processes };
  for (const [name, p] of Object.entries(b.processes)) {
    const q = processes[name];
    processes[name] = q ? { cpu: q.cpu + p.cpu, user: q.user + p.user, syscalls: q.syscalls + p.syscalls } : p;
  }
  return { seconds: a.seconds + b.seconds, requests: a.requests + b.requests, processes };
}

/**
 * `name 0.52 cores 130 µs (62% user) 2.2 rw-syscalls | ...`: cores used, CPU time and read/write
 * system calls per request (the rest of the CPU time is the kernel's), for the processes that did something.
 */
export function formatCpu(usage) {
  return Object.entries(usage.processes)
    .filter(([, p]) => Number.isFinite(p.cpu) && p.cpu / usage.seconds >= 0.005)
    .map(
      ([name, p]) =>
        `${name} ${(p.cpu / usage.seconds).toFixed(2)} cores ${((p.cpu * 1e6) / usage.requests).toFixed(0)} µs (${p.cpu > 0 ? Math.round((p.user / p.cpu) * 100) : 0}% user) ${(p.syscalls / usage.requests).toFixed(2)} rw-syscalls`,
    )
    .join(' | ');
}
