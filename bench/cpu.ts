/** CPU time of this machine's processes, from /proc: PostgreSQL's, and a server's process tree. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second, the unit of /proc/<pid>/stat's utime and stime. */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time (utime + stime, in clock ticks) of each process, by pid. */
export type Ticks = Map<number, number>;

/** A process's comm and utime + stime (all its threads); null once it has exited. */
function stat(pid: number): { comm: string; ticks: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may hold spaces and parentheses; the fields after its last ')' start at field 3.
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    return { comm: text.slice(text.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** Every PostgreSQL server process on this machine (postmaster, backends, background workers). */
export function postgresTicks(): Ticks {
  const ticks: Ticks = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s?.comm === 'postgres') ticks.set(Number(entry), s.ticks);
  }
  return ticks;
}

/** A server's process and its children, recursively (a cluster's workers). */
export function treeTicks(pid: number | undefined, ticks: Ticks = new Map()): Ticks {
  const s = pid ? stat(pid) : null;
  if (!pid || !s) return ticks;
  ticks.set(pid, s.ticks);
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
    for (const child of children.filter(Boolean)) treeTicks(Number(child), ticks);
  } catch {
    // exited meanwhile
  }
  return ticks;
}

/**
 * Ticks spent between two samples, over the processes alive at the second. One that exited in
 * between (a backend whose connection closed) loses what it spent since the first; one started in
 * between counts fully. A pid reused by a new process (fewer ticks than before) counts fully too.
 */
export function spent(before: Ticks, after: Ticks): number {
  let sum = 0;
  for (const [pid, ticks] of after) {
    const was = before.get(pid) ?? 0;
    sum += ticks >= was ? ticks - was : ticks;
  }
  return sum;
}

/** Microseconds of CPU per request, to the microsecond. */
export const perRequest = (ticks: number, requests: number) =>
  requests > 0 ? Math.round(((ticks / CLK_TCK) * 1e6) / requests) : 0;
