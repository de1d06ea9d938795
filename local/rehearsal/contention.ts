/**
 * Time limits that measure the function, not the machine. Lambda enforces a
 * function's Timeout (and API Gateway its integration timeout) in wall time,
 * on a machine that runs that function alone. The rehearsal runs on a shared
 * box: on 2 cores at a load of 7, a feed that takes 2 s alone took over 6 s of
 * wall time and was timed out although it did nothing wrong. So a limit here
 * is over when either
 * - the function's own CPU time (its process's user + system time) passes
 *   the limit: a function that computes too
 *   long is timed out however slow or fast the machine; or
 * - its wall time passes the limit stretched by the contention measured while
 *   it ran (the highest run-queue length per core seen, from the 1-minute load
 *   average, never below 1): a function that waits too long (on a timer, a
 *   call that never answers) is timed out, later on a busy machine, at the
 *   limit itself on a quiet one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** What a limit is checked against at one moment. */
export interface Spent {
  /** Wall time since the start, ms. */
  readonly wallMs: number;
  /** CPU time of the process running the function since the start, ms; undefined where it cannot be read. */
  readonly cpuMs: number | undefined;
  /** The highest contention seen since the start (≥ 1). */
  readonly stretch: number;
}

/** Whether a limit of `limitMs` is spent: the rule above, pure. */
export function overLimit(limitMs: number, spent: Spent): boolean {
  if (spent.cpuMs !== undefined && spent.cpuMs > limitMs) return true;
  return spent.wallMs > limitMs * Math.max(1, spent.stretch);
}

/** Runnable tasks per core now (≥ 1); 1 where the platform has no load average (Windows answers 0). */
export function machineContention(): number {
  return Math.max(1, loadavg()[0]! / availableParallelism());
}

const TICK_MS = 1000 / 100; // USER_HZ: 100 on every Linux ABI (times in /proc/<pid>/stat are in these ticks)
const HAS_PROC = existsSync('/proc/self/stat');

/**
 * A process's CPU time (user + system, all its threads), ms: from /proc on
 * Linux, else from `ps` (macOS; a process started per reading); undefined once
 * the process is gone or where neither answers (Windows).
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    if (HAS_PROC) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces, in parentheses): utime and stime are the 14th and 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    }
    return psTimeMs(execFileSync('ps', ['-o', 'time=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch {
    return undefined;
  }
}

/** `ps -o time=`: [[dd-]hh:]mm:ss[.cc]. */
export function psTimeMs(text: string): number | undefined {
  const m = /^\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!m) return undefined;
  return (((Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 60 + Number(m[3])) * 60 + Number(m[4])) * 1000;
}

/** How often a watched limit is checked: a function is timed out within this much of its limit. */
const CHECK_MS = 100;

export interface WatchOptions {
  /** The process whose CPU time counts (none: wall time and contention only). */
  readonly pid?: number;
  /** Contention reader (tests inject one); default machineContention. */
  readonly contention?: () => number;
}

/**
 * Calls `onOver` once the limit is spent (the rule above), checking every
 * CHECK_MS; the returned function stops watching.
 */
export function watchLimit(limitMs: number, onOver: () => void, opts: WatchOptions = {}): () => void {
  const contention = opts.contention ?? machineContention;
  const start = performance.now();
  const cpuStart = processCpuMs(opts.pid);
  let stretch = contention();
  const timer = setInterval(() => {
    stretch = Math.max(stretch, contention());
    const wallMs = performance.now() - start;
    // A process's CPU time runs no faster than the wall clock (one thread at work), so it is read only past the limit.
    if (wallMs <= limitMs) return;
    const cpuNow = cpuStart === undefined ? undefined : processCpuMs(opts.pid);
    const spent = { wallMs, cpuMs: cpuNow === undefined || cpuStart === undefined ? undefined : cpuNow - cpuStart, stretch };
    if (overLimit(limitMs, spent)) {
      clearInterval(timer);
      onOver();
    }
  }, Math.min(CHECK_MS, limitMs));
  return () => clearInterval(timer);
}
