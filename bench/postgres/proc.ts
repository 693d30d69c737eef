/**
 * CPU time of processes from /proc, for the PostgreSQL probes: on a shared machine what a
 * variant costs the server is its CPU time, which wall time alone hides.
 */
import { readFileSync } from 'node:fs';

/**
 * User and system time of process `pid`, in ticks (USER_HZ, 100 a second); with `children`, the
 * time of its children it has waited for too (a backend that exited). 0 if it has ended.
 */
export function cpuTicks(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  } catch {
    return 0; // the process ended meanwhile
  }
}
