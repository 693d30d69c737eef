// Finds or starts the PostgreSQL server the tests and benchmarks run against. Used by the
// Vitest global setup (once per `npm test`), by tests that need a private server they may crash
// and restart, and by the benchmarks. Run directly (`node scripts/postgres.mjs`) it starts a
// throwaway server, prints its URL and keeps it up until Ctrl-C.
//
// Order: LEASEHOLD_PG_URL if set; else a server binary on this machine, started as a throwaway
// cluster in a temp dir on a free port (as a non-root user: PostgreSQL refuses to run as root);
// else, as root on Debian, Debian's `postgresql` package is installed first (as
// ensure-browsers.mjs does for the browsers); else an error that says what to install.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.mjs';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The directory holding initdb and pg_ctl, or undefined. `LEASEHOLD_PG_BIN` wins. */
export function findPostgresBin() {
  const candidates = [];
  if (process.env.LEASEHOLD_PG_BIN) candidates.push(process.env.LEASEHOLD_PG_BIN);
  // Debian/Ubuntu keep each major version apart and put only the clients on PATH: newest first.
  if (existsSync('/usr/lib/postgresql')) {
    const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(`/usr/lib/postgresql/${v}/bin`);
  }
  const which = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) candidates.push(join(which.stdout.trim(), '..'));
  candidates.push('/usr/local/pgsql/bin');
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

function installDebianPackage() {
  if (!isRoot || !existsSync('/usr/bin/apt-get')) return;
  console.log('postgres: no server binary found; installing Debian package "postgresql" with apt-get…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'postgresql'], { stdio: 'inherit', env });
}

/** A user to run the server as: none needed unless we are root; then `postgres`, created if missing. */
function serverUser() {
  if (!isRoot) return undefined;
  const name = process.env.LEASEHOLD_PG_USER ?? 'postgres';
  if (spawnSync('id', ['-u', name]).status !== 0) {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name], { stdio: 'inherit' });
  }
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return { name, uid, gid };
}

/** Runs a server binary as `user` (runuser, else setpriv) or as ourselves. */
function runAs(user, bin, args, options = {}) {
  if (!user) return execFileSync(bin, args, { encoding: 'utf8', ...options });
  if (existsSync('/usr/sbin/runuser') || existsSync('/sbin/runuser')) {
    return execFileSync('runuser', ['-u', user.name, '--', bin, ...args], { encoding: 'utf8', ...options });
  }
  return execFileSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', bin, ...args], { encoding: 'utf8', ...options });
}

/** Every throwaway cluster's directory starts so: `<tmpdir>/leasehold-pg-<label rest>-XXXXXX`. */
const CLUSTER_PREFIX = 'leasehold-pg';

/** When process `pid` started (clock ticks since boot, from /proc), or undefined if it is gone or unknown. */
function startedAt(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `owner` ({ pid, started }) still runs (the same one: pids are reused). */
function ownerAlive(owner) {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if (error.code === 'ESRCH') return false;
  }
  const now = startedAt(owner.pid);
  return now === undefined || owner.started === undefined || now === owner.started;
}

/**
 * Stops and removes throwaway clusters whose run is gone: a Vitest killed before its teardown
 * (a timeout, Ctrl-C, SIGKILL) leaves its server running. Each cluster directory names the
 * process that started it (`owner.json`: pid and start time); a cluster is reaped only when
 * that process no longer exists, so another live run's cluster (any user's, any label) is never
 * touched, nor one without an owner file (being created right now, or from an older script).
 * Returns the directories removed.
 */
export function reapStaleClusters() {
  const reaped = [];
  const bin = findPostgresBin();
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(`${CLUSTER_PREFIX}-`)) continue;
    const dir = join(tmpdir(), name);
    let owner;
    try {
      owner = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8'));
    } catch {
      continue;
    }
    if (ownerAlive(owner)) continue;
    const dataDir = join(dir, 'data');
    if (bin && existsSync(join(dataDir, 'postmaster.pid'))) {
      try {
        runAs(serverUser(), join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], { stdio: 'pipe' });
      } catch {
        // not running any more (a stale postmaster.pid): nothing to stop
      }
    }
    rmSync(dir, { recursive: true, force: true });
    console.log(`postgres: removed a stale throwaway cluster ${dir} (its run, pid ${owner.pid}, is gone)`);
    reaped.push(dir);
  }
  return reaped;
}

export { freePort };

/**
 * Starts a throwaway cluster and returns `{ url, dataDir, restart(mode), stop() }`. `settings`
 * are extra `-c name=value` server settings. Durability settings stay at PostgreSQL's defaults
 * unless `fast` is set (tests: fsync off, which changes nothing a server crash can show, only
 * what an OS crash could).
 * Stale clusters of runs that are gone are reaped first (see reapStaleClusters). `label` must
 * start with `leasehold-pg-`: that prefix is what the reaper looks for.
 * @throws RangeError for a label without that prefix.
 * @throws Error saying what to install when no server binary exists and none can be installed.
 */
export async function startThrowawayPostgres({ fast = false, settings = {}, label = CLUSTER_PREFIX } = {}) {
  if (label !== CLUSTER_PREFIX && !label.startsWith(`${CLUSTER_PREFIX}-`)) throw new RangeError(`label must start with "${CLUSTER_PREFIX}-", got ${JSON.stringify(label)}`);
  let bin = findPostgresBin();
  if (!bin) {
    installDebianPackage();
    bin = findPostgresBin();
  }
  if (!bin) {
    throw new Error(
      [
        'No PostgreSQL server found for the PostgreSQL tests.',
        'Either point LEASEHOLD_PG_URL at a server the tests may create schemas in, e.g.',
        '  LEASEHOLD_PG_URL=postgres://user:password@127.0.0.1:5432/leasehold_test npm test',
        'or install a server binary (initdb, pg_ctl), then run the tests again:',
        '  - Debian/Ubuntu: sudo apt-get install postgresql',
        '  - macOS: brew install postgresql',
        '  - or point LEASEHOLD_PG_BIN at the directory holding initdb and pg_ctl.',
      ].join('\n'),
    );
  }
  reapStaleClusters();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  // Written before anything else: a directory without it is never reaped (see reapStaleClusters).
  writeFileSync(join(dir, 'owner.json'), JSON.stringify({ pid: process.pid, started: startedAt(process.pid) }));
  const dataDir = join(dir, 'data');
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  runAs(user, join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'], { stdio: 'pipe' });
  const port = await freePort();
  const all = { listen_addresses: '127.0.0.1', port: String(port), unix_socket_directories: dir, max_connections: '200', ...(fast ? { fsync: 'off', full_page_writes: 'off' } : {}), ...settings };
  const options = Object.entries(all).map(([k, v]) => `-c ${k}=${v}`).join(' ');
  const logFile = join(dir, 'server.log');
  const pgCtl = (args) => runAs(user, join(bin, 'pg_ctl'), ['-D', dataDir, ...args], { stdio: 'pipe' });
  const start = () => {
    try {
      pgCtl(['-o', options, '-l', logFile, '-w', '-t', '60', 'start']);
    } catch (error) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '(no log)';
      throw new Error(`PostgreSQL did not start (pg_ctl: ${error.message.trim()})\nserver log:\n${log}`);
    }
  };
  start();
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    /** Stops the server (`immediate`: like a crash, no checkpoint) and starts it again on the same port. */
    restart(mode = 'fast') {
      pgCtl(['-m', mode, '-w', 'stop']);
      start();
    },
    /** Stops the server abruptly (`-m immediate`) without starting it again. */
    crash() {
      pgCtl(['-m', 'immediate', '-w', 'stop']);
    },
    start,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        pgCtl(['-m', 'immediate', '-w', 'stop']);
      } catch {
        // already down
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The server for a test or benchmark run: `LEASEHOLD_PG_URL` if set (never stopped by us),
 * else a throwaway cluster. Returns `{ url, stop(), throwaway }`.
 */
export async function startPostgres(options = {}) {
  const fromEnv = process.env.LEASEHOLD_PG_URL;
  if (fromEnv) return { url: fromEnv, throwaway: false, stop() {} };
  const server = await startThrowawayPostgres(options);
  return { url: server.url, throwaway: true, stop: () => server.stop() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startThrowawayPostgres({ label: 'leasehold-pg-manual' });
  console.log(server.url);
  const stop = () => {
    server.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  setInterval(() => {}, 1 << 30);
}
