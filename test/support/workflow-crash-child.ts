/**
 * A worker to be killed: runs the five-step workflow `crash` on a better-sqlite3 file until it
 * completes, appending each step's name to `<file>.effects` (its side effect) as the step's fn
 * runs. With `kill=<k>:before`, it SIGKILLs itself inside step k's fn, after the side effect and
 * before the result is committed; with `kill=<k>:after`, right after step k's commit, before its
 * ack. `offset=<ms>` moves its clock ahead (a later worker, whose predecessor's lease has run out).
 * Prints `DONE <result>` and exits once the workflow has completed.
 */
import { appendFileSync } from 'node:fs';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';
import { defineWorkflow, Workflows } from '../../src/workflow/index.js';
import { storeWithFault } from './workflow-faults.js';

const [file, ...flags] = process.argv.slice(2);
const option = (name: string): string | undefined => flags.find((f) => f.startsWith(`${name}=`))?.slice(name.length + 1);
const [killStep, killWhen] = (option('kill') ?? '0:never').split(':');
const offset = Number(option('offset') ?? 0);
const clock = (): number => Date.now() + offset;
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

const crash = defineWorkflow('crash', async (_input: undefined, step) => {
  const done: string[] = [];
  for (let k = 1; k <= 5; k++) {
    done.push(
      await step.run(`s${k}`, () => {
        appendFileSync(`${file}.effects`, `s${k}\n`);
        if (killWhen === 'before' && Number(killStep) === k) die();
        return `s${k}`;
      }),
    );
  }
  return done.join(',');
});

const db = await openBetterSqliteDatabase(file!);
const store = storeWithFault(new SqliteStore(db), () => {}, (exe, changes) => {
  const steps = (exe.$workflow as { steps: unknown[] } | undefined)?.steps ?? [];
  if (killWhen === 'after' && steps.length === Number(killStep) && changes?.trace?.step === `step.run("s${killStep}")`) die();
});
const workflows = new Workflows({ store, transport: new SqliteTransport(db, { clock }), workerId: `w-${process.pid}`, clock, visibilityMs: 30_000, workflows: [crash] });
await workflows.start(crash, 'wf');
for (;;) {
  const result = await workflows.step();
  if (result.kind !== 'idle') continue;
  const snapshot = await workflows.get('wf');
  if (snapshot?.status === 'completed') {
    process.stdout.write(`DONE ${String(snapshot.result)}\n`, () => process.exit(0));
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}
