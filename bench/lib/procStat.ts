/**
 * CPU time and memory of a process from /proc (Linux only): what a benchmark reads before and
 * after a window to get another process's CPU share without instrumenting it.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticksPerSecond = 100;
    }
    if (!Number.isFinite(ticksPerSecond) || ticksPerSecond <= 0) ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** Fields of /proc/PID/stat after the command name (which may contain spaces and parentheses). */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/**
 * User + system CPU seconds the process has used, all its threads together (utime + stime, in
 * clock ticks: 10 ms resolution at the usual 100 Hz, so measure over seconds).
 */
export function cpuSeconds(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.system;
}

/**
 * CPU seconds of the process's main thread alone (its thread id is its pid): with cpuSeconds, what
 * its other threads (worker threads, V8's and libuv's helpers) used.
 */
export function mainThreadCpuSeconds(pid: number): number {
  const text = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / clockTicks();
}

/**
 * CPU seconds of each of the process's threads, by thread id. Node names every thread "node", so
 * callers tell them apart by what they used: the main thread's id is the pid, a busy pool thread
 * stands out, and V8's and libuv's helpers use little.
 */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) / clockTicks());
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * What a process has asked of the kernel so far: its read and write system calls (syscr, syscw of
 * /proc/PID/io: socket and pipe I/O included) and its threads' context switches, voluntary (it
 * waited: each wake-up of an idle event loop is one) and involuntary (preempted).
 */
export function kernelCounts(pid: number): {
  reads: number;
  writes: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
} {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (text: string, name: string) =>
    Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  let voluntarySwitches = 0;
  let involuntarySwitches = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      voluntarySwitches += field(status, 'voluntary_ctxt_switches');
      involuntarySwitches += field(status, 'nonvoluntary_ctxt_switches');
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return {
    reads: field(io, 'syscr'),
    writes: field(io, 'syscw'),
    voluntarySwitches,
    involuntarySwitches,
  };
}

/** User and system CPU seconds apart (utime, stime). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const f = statFields(pid);
  // Fields 14 and 15 of stat(5); index 0 here is field 3 (state).
  return { user: Number(f[11]) / clockTicks(), system: Number(f[12]) / clockTicks() };
}

/** Resident memory in MiB. */
export function rssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** The soft limit on open files of this process (children inherit it). */
export function openFilesLimit(): number {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  if (!m) return Number.POSITIVE_INFINITY;
  return m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/** How many local ports the kernel hands out for port 0 and outgoing connections. */
export function ephemeralPorts(): number {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return (hi as number) - (lo as number) + 1;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * "load 1.23 / 2 CPUs, CPU pressure 40.5%": the 1-minute load average against the CPUs, and how
 * much of the last 10 s runnable tasks spent waiting for a CPU, to print next to figures that other
 * processes on the machine can disturb (latencies most of all).
 */
export function machineLoad(): string {
  const cpus = availableParallelism();
  let text = `${cpus} CPUs`;
  try {
    const one = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    text = `load ${one} / ${cpus} CPUs`;
    // Pressure stall information: the share of the last 10 s in which a runnable task waited.
    const psi = /^some avg10=([\d.]+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    if (psi) text += `, CPU pressure ${psi[1]}%`;
  } catch {
    // No /proc/loadavg or no PSI: say what is known.
  }
  return text;
}
