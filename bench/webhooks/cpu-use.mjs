// CPU used per process during a phase, PostgreSQL's backends counted as one process.
import fs from 'node:fs';
import path from 'node:path';
import { cpuMeter } from '../lib/cpu.mjs';

/** PIDs whose parent is `pid` (PostgreSQL backends of the postmaster), from /proc. */
function childrenOf(pid) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * CPU seconds of PostgreSQL so far: the postmaster's own and that of the backends it reaped
 * (cutime, cstime), plus the backends alive now. Backends started or ended during a phase count
 * too (the worker's pool opens connections as it needs them).
 */
function postgresCpuSeconds(postmaster) {
  const fieldsOf = (pid) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  // utime, stime, cutime, cstime: fields 14 to 17 (1-based) of the line; 100 ticks per second.
  const f = fieldsOf(postmaster);
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const pid of childrenOf(postmaster)) {
    try {
      const c = fieldsOf(pid);
      ticks += Number(c[11]) + Number(c[12]);
    } catch {
      // gone in between: reaped, so counted in the postmaster's cutime/cstime next time
    }
  }
  return ticks / 100;
}

/** The postmaster of the bench environment's PostgreSQL. */
export function postmasterPid(env) {
  return Number(fs.readFileSync(path.join(env.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** CPU cores used per process (all PostgreSQL processes as one) between now and stop(). */
export function startMeter(env, worker) {
  const postmaster = postmasterPid(env);
  const pgBackends = [postmaster, ...childrenOf(postmaster)];
  const pgBefore = postgresCpuSeconds(postmaster);
  const started = performance.now();
  const m = cpuMeter({
    'webhook-worker': worker.pid,
    'redis-server': env.pids['redis-server'],
    'nats-server': env.pids['nats-server'],
    'bench (publisher + receiver)': process.pid,
    ...Object.fromEntries(pgBackends.map((pid) => [`postgres-${pid}`, pid])),
  });
  return {
    /** Per process: cores used, CPU µs and read/write system calls per event (`events` delivered meanwhile). */
    stop(events) {
      const use = m.stop(events);
      const seconds = (performance.now() - started) / 1000;
      const pgCpu = postgresCpuSeconds(postmaster) - pgBefore;
      const pg = {
        cores: pgCpu / seconds,
        usPerRequest: events ? (pgCpu * 1e6) / events : NaN,
        syscallsPerRequest: 0,
      };
      for (const [k, v] of Object.entries(use)) {
        if (!k.startsWith('postgres-')) continue;
        // System calls: of the backends there at the start and still there (an approximation).
        if (Number.isFinite(v.syscallsPerRequest)) pg.syscallsPerRequest += v.syscallsPerRequest;
        delete use[k];
      }
      use.postgres = pg;
      return use;
    },
  };
}
