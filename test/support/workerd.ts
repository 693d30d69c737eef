/**
 * Runs the real workerd for tests and benchmarks: bundles test/workerd/worker.ts with esbuild,
 * writes a config in a temp dir (the object's SQLite storage on local disk there), starts
 * `workerd serve` on a free port and waits until it answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { freePort } from '../../scripts/ports.mjs';

const root = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
/** The binary itself (from @cloudflare/workerd-linux-64 and friends), not npm's shim, so a kill reaches it. */
const workerdBinary: string = require('workerd').default;

export interface Workerd {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The workerd process's id (benchmarks read its CPU time from /proc). */
  pid: number;
  /** The temp dir holding the config, the bundle and the storage. */
  dir: string;
  /** SIGTERM, then wait for the exit. The storage stays (start again with the same dir). */
  stop(): Promise<void>;
  /** SIGKILL, then wait for the exit: a crash. */
  kill(): Promise<void>;
  /** Removes the temp dir (after stop or kill). */
  remove(): void;
  /** What workerd printed so far (uncaught errors in the Worker land here). */
  output(): string;
}

/** What to run: the test Worker, or another entry (the example) with its class and text bindings. */
export interface WorkerSpec {
  entry: string;
  className: string;
  bindings: Record<string, string>;
}

const TEST_WORKER: WorkerSpec = { entry: 'test/workerd/worker.ts', className: 'TestObject', bindings: {} };

function config(port: number, spec: WorkerSpec): string {
  const texts = Object.entries(spec.bindings).map(([name, value]) => `    (name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)}),
`).join('');
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .leasehold),
    (name = "disk", disk = (path = "data", writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const leasehold :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-11-01",
  durableObjectNamespaces = [(className = "${spec.className}", uniqueKey = "leasehold-test", enableSql = true)],
  durableObjectStorage = (localDisk = "disk"),
  bindings = [
    (name = "QUEUE", durableObjectNamespace = "${spec.className}"),
${texts}  ],
);
`;
}

/** Bundles a Worker (leasehold from src) into `dir/worker.js`. */
export async function bundleWorker(dir: string, entry: string): Promise<void> {
  await build({
    entryPoints: [join(root, entry)],
    alias: { 'leasehold/durable-object': join(root, 'src/durable-object/index.ts') },
    outfile: join(dir, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external: ['cloudflare:workers'],
    logLevel: 'error',
  });
}

/**
 * Starts workerd with `spec` (default: the test Worker). With `dir` (from an earlier start),
 * reuses its bundle and storage: a restart (pass the same spec). With `port` (the one an earlier
 * start got, freed by its stop or kill), clients holding its URL reach the restarted server.
 * @throws Error with workerd's output when it does not come up within 60 s (it takes under a
 * second when idle, several on a loaded machine).
 */
export async function startWorkerd(dir?: string, spec: WorkerSpec = TEST_WORKER, port?: number): Promise<Workerd> {
  const home = dir ?? mkdtempSync(join(tmpdir(), 'leasehold-workerd-'));
  if (!dir) {
    mkdirSync(join(home, 'data'));
    await bundleWorker(home, spec.entry);
  }
  port ??= await freePort();
  writeFileSync(join(home, 'config.capnp'), config(port, spec));
  const child: ChildProcess = spawn(workerdBinary, ['serve', 'config.capnp', '--experimental'], { cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}:\n${output}`);
    try {
      await fetch(`${url}/ready`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`workerd did not answer on ${url} within 60 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url,
    pid: child.pid!,
    dir: home,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    remove: () => rmSync(home, { recursive: true, force: true }),
    output: () => output,
  };
}
