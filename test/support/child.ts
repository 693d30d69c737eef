/**
 * Runs a TypeScript child process and reads its report lines. `ended` resolves only when the
 * child has exited AND its stdout has been read to the end: a child killed with SIGKILL may
 * still have reports in the pipe when its exit is seen, and a check that ran on exit alone would
 * miss them (the 500-kill soak saw exactly that: version 10353 on disk against 10021 reported).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface RunningChild {
  proc: ChildProcess;
  /** Exit code and signal, once the child has exited and every line it wrote has been handled. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/**
 * Starts `script` (a .ts file) with `args`; `onLine` gets every stdout line, in order. With
 * `stdin`, the child's stdin is a pipe the caller may write to and end (`proc.stdin`).
 */
export function runChild(script: string, args: string[], onLine: (line: string) => void, { stdin = false } = {}): RunningChild {
  const proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (chunk) => (stderr += chunk));
  const lines = createInterface({ input: proc.stdout! });
  lines.on('line', onLine);
  const read = once(lines, 'close');
  const exited = once(proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const ended = Promise.all([exited, read]).then(([[code, signal]]) => ({ code, signal, stderr }));
  return { proc, ended };
}
