/**
 * examples/durable-object, as its README runs it: the folder installed from the packed tarball
 * as `npm install` there would (leasehold from the tarball; ws linked from this repository, as
 * the scratch apps' other registry packages are; wrangler left out, it needs Cloudflare), its
 * worker.ts served by the real workerd, and `npm run consume` on this Node taking the order a
 * `POST /orders` published, printing it as the README says.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../../scripts/pack.mjs';
import { startWorkerd, type Workerd } from '../support/workerd.ts';
import { childEnv, npm } from './scratch.ts';

const EXAMPLE = join(repoRoot, 'examples/durable-object');
let app = '';
let workerd: Workerd | undefined;
let consumer: ChildProcess | undefined;

beforeAll(async () => {
  const { scratch, tarball } = inject('packed');
  app = join(scratch, 'durable-object');
  cpSync(EXAMPLE, app, { recursive: true, filter: (path) => !/[\\/](node_modules|\.wrangler|package-lock\.json)$/.test(path) });
  const manifest = JSON.parse(readFileSync(join(EXAMPLE, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies?: Record<string, string> };
  expect(manifest.dependencies.leasehold).toBe('file:../..'); // the clone itself, as the README says
  manifest.dependencies.leasehold = `file:${tarball}`;
  delete manifest.dependencies.ws;
  delete manifest.devDependencies;
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await npm(app, ['install', '--prefer-offline']);
  symlinkSync(join(repoRoot, 'node_modules/ws'), join(app, 'node_modules/ws'), 'dir');
  workerd = await startWorkerd(undefined, { entry: 'examples/durable-object/worker.ts', className: 'Queue', bindings: { LEASEHOLD_TOKEN: 'example-token' } });
}, 300_000);

afterAll(async () => {
  // npm runs the consumer in a process group of its own (detached): end that group.
  if (consumer?.pid && consumer.exitCode === null) process.kill(-consumer.pid, 'SIGTERM');
  await workerd?.stop();
  workerd?.remove();
});

describe('examples/durable-object', () => {
  it('npm run consume, from its folder on this Node, prints the order a POST /orders published', async () => {
    const order = { id: 'o-1', customer: 'ada' };
    const posted = await fetch(`${workerd!.url}/orders`, { method: 'POST', body: JSON.stringify(order) });
    expect(posted.status).toBe(200);
    consumer = spawn('npm', ['run', '--silent', 'consume'], {
      cwd: app,
      env: { ...childEnv(), LEASEHOLD_URL: workerd!.url, LEASEHOLD_TOKEN: 'example-token' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    consumer.stderr!.on('data', (chunk) => (stderr += chunk));
    await new Promise<void>((resolve, reject) => {
      consumer!.stdout!.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.includes('\n')) resolve();
      });
      consumer!.once('exit', (code) => reject(new Error(`the consumer exited with ${code}:\n${stdout}\n${stderr}`)));
    });
    expect(stdout.trim()).toBe(`order ${JSON.stringify(order)}`);
    // Consumed: acked in the object, so nothing is left queued.
    const unfinished = async () => {
      const response = await fetch(`${workerd!.url}/leasehold/orders/call`, {
        method: 'POST',
        headers: { authorization: 'Bearer example-token', 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'transport', method: 'stats', args: [] }),
      });
      const { value } = (await response.json()) as { value: { queued: number } };
      return value.queued;
    };
    await expect.poll(unfinished).toBe(0);
  });

  it('without LEASEHOLD_URL and LEASEHOLD_TOKEN, says what to set and exits 2', async () => {
    const child = spawn(process.execPath, ['consumer.mjs'], { cwd: app, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('Set LEASEHOLD_URL');
  });
});
