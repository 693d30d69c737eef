/**
 * Lesson 10's workflow and its side effects. The order workflow reserves, charges, waits for the
 * courier (a store timer) and ships; each `step.run` does its work on demo time and leaves a mark
 * in the shop's ledger — a stand-in for the warehouse and the payment provider, which live outside
 * the database. The ledger is localStorage, so every tab of the page reads the same one: it counts
 * how often each step's `fn` really ran, whichever tab ran it, while the store says which steps are
 * recorded. A finished step is recorded once and never run again: its count stays at 1.
 */
import { defineWorkflow, type Workflow } from 'leasehold/workflow';

/** The workflow's name, as every tab registers it. */
export const ORDER_WORKFLOW = 'order';

/** One run of a step's `fn`: which tab and worker ran it, and when (demo time). */
export interface StepRun {
  execution: string;
  step: string;
  worker: string;
  tab: string;
  at: number;
}

export interface OrderInput {
  /** How long the workflow waits for the courier between charge and ship (a `step.sleep`). */
  courierMs: number;
}

/**
 * Does one step's work for a worker: `replayed` names the steps this replay returned from the
 * record without running them. Resolves what the step records.
 */
export type PerformStep = (executionId: string, step: string, replayed: readonly string[]) => Promise<string>;

/** The order workflow, whose steps `perform` carries out (each tab's worker brings its own). */
export function orderWorkflow(perform: PerformStep): Workflow<OrderInput, string> {
  return defineWorkflow(ORDER_WORKFLOW, async (input: OrderInput, step) => {
    // Which steps came back from the record in this replay, for the log; never read to choose a step.
    const replayed: string[] = [];
    const run = async (name: string): Promise<string> => {
      let ran = false;
      const result = await step.run(name, () => {
        ran = true;
        return perform(step.executionId, name, [...replayed]);
      });
      if (!ran) replayed.push(name);
      return result;
    };
    const reserved = await run('reserve');
    const charged = await run('charge');
    await step.sleep(input.courierMs);
    replayed.push('the courier wait');
    const shipped = await run('ship');
    return `${reserved}; ${charged}; ${shipped}`;
  });
}

/** "reserve, charge and ship": names as the log writes them. */
export function list(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const LEDGER_KEY = 'leasehold-demo-side-effects';

/** The shop's ledger: every run of a step's `fn`, oldest first, as all tabs of the page see it. */
export const ledger = {
  read(): StepRun[] {
    try {
      const raw = localStorage.getItem(LEDGER_KEY);
      return raw ? (JSON.parse(raw) as StepRun[]) : [];
    } catch {
      // No localStorage (some private modes): the lesson runs, its counts stay empty.
      return [];
    }
  },
  add(run: StepRun): void {
    try {
      localStorage.setItem(LEDGER_KEY, JSON.stringify([...ledger.read(), run]));
    } catch {
      // See read.
    }
  },
  /** A lesson starts with an empty ledger, as with an empty queue. */
  clear(): void {
    try {
      localStorage.removeItem(LEDGER_KEY);
    } catch {
      // See read.
    }
  },
};
