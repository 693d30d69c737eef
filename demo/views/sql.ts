/**
 * The SQL at work: the statements of the last claim and the last ack as the owner ran them,
 * with their bound parameters and results, and the `lh_groups` rows before and after — so "the
 * claim walks groups in round-robin order and takes the first whose head is free" can be
 * watched. Read from `sqlTrace()` (the database is opened with `traceSql: true`).
 */
import type { SqlGroupRow, SqlTraceEntry, SqlTraceStatement } from 'leasehold/browser';
import { seconds } from '../clock.ts';
import { h } from './dom.ts';

const CLAIMS = new Set(['claim', 'claimMany', 'ackAndClaim', 'ackAndClaimMany']);
const ACKS = new Set(['ack', 'ackMany', 'nack']);
const COLUMNS: (keyof SqlGroupRow)[] = ['group_id', 'priority', 'claim_order', 'first_seq', 'head_attempt', 'holder', 'locked_until'];

/** What each statement is for, by how it begins. */
const WHY: [string, string][] = [
  ['SAVEPOINT', 'This call’s savepoint: the owner runs the calls that queued up together in one BEGIN IMMEDIATE … COMMIT (group commit), each under its own savepoint, so one failing call undoes only itself.'],
  ['SELECT result FROM lh_calls', 'The call came from another tab: was it applied already (a retry after the owner changed)?'],
  ['UPDATE OR FAIL lh_groups SET holder = ?, locked_until', 'The claim in one statement: walk lh_groups in claim order (index lh_groups_by_claim_order), take the first group at or above the floor whose head is free or whose lock ran out before now, lease its head to the worker until the lease’s end, count the delivery, send the group to the back of the line (one past the largest claim order so far), and return the leased head message with the queue’s low-water mark. Parameters: worker, lease end, the queue’s id (4×), floor, now, the queue’s id, maxAttempts, the queue’s id (2×).'],
  ['SELECT seq, event FROM lh_messages', 'Read the leased group’s head: its first message by seq.'],
  ['SELECT g.group_id, g.head_attempt', 'claimMany in one read: the first k groups a claim could take (same walk, same floor, same now) with their heads and the largest claim order so far. k successive claims take exactly these, in this order, unless a head is due for the dead letters; then the claims run one by one.'],
  ['WITH l (group_id, claim_order)', 'claimMany’s lease: every group read above at once, each sent to the back of the line with the next claim-order value, in order.'],
  ['WITH l (group_id, seq, holder, attempt)', 'ackMany in one statement (leases of distinct groups): delete each head whose lease still holds it (same holder, same attempt, still the group’s first message); the rows returned are the acked ones, the rest were lost. Triggers then free or drop each group.'],
  ['SELECT group_id, priority FROM lh_groups', 'Nothing was leased: is there a group whose head used up its attempts?'],
  ['INSERT INTO lh_dead_letters', 'That head had maxAttempts deliveries: copy it to the dead letters…'],
  ['DELETE FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq = ? AND', 'The ack: delete the head only while this lease still holds it (same holder, same attempt, still the group’s first message). 0 rows: the lease was lost — fencing. A trigger then frees the group for its next message, or drops the group once empty.'],
  ['DELETE FROM lh_messages', '…and remove it from its group; the claim then walks on.'],
  ['UPDATE lh_groups SET holder = NULL', 'The nack: give the head back (or park it until the first parameter) only while this lease still holds it.'],
  ['INSERT INTO lh_calls', 'Remember the answer in the same transaction, so a retry is answered, not applied twice.'],
];

export class SqlView {
  readonly el: HTMLElement;
  readonly #claim = h('section', { class: 'sql-call', attrs: { 'data-testid': 'sql-claim' } });
  readonly #ack = h('section', { class: 'sql-call', attrs: { 'data-testid': 'sql-ack' } });
  #key = '';

  constructor() {
    this.el = h('div', { class: 'sql' }, this.#claim, this.#ack);
    this.render([]);
  }

  render(entries: readonly SqlTraceEntry[]): void {
    const claim = last(entries, CLAIMS);
    const ack = last(entries, ACKS);
    const key = [claim, ack].map((e) => (e ? `${e.method}@${e.at}:${e.statements.length}:${e.error?.name ?? ''}` : '-')).join('|');
    if (key === this.#key) return;
    this.#key = key;
    this.#fill(this.#claim, 'Last claim', claim);
    this.#fill(this.#ack, 'Last ack or nack', ack);
  }

  #fill(el: HTMLElement, title: string, entry: SqlTraceEntry | undefined): void {
    if (!entry) {
      el.replaceChildren(h('h3', { text: title }), h('p', { class: 'empty', text: 'None yet: start a lesson or add a worker.' }));
      return;
    }
    const where = entry.transaction === 'batch' ? 'under a SAVEPOINT in the owner’s batch transaction (BEGIN IMMEDIATE … COMMIT, shared with the calls queued alongside)' : 'in its own BEGIN IMMEDIATE … COMMIT';
    const outcome = entry.error ? h('p', { class: 'sql-error', text: `Refused: ${entry.error.name} — ${entry.error.message}. Rolled back to the savepoint: nothing changed.` }) : null;
    el.setAttribute('data-method', entry.method);
    el.setAttribute('data-at', String(entry.at));
    el.replaceChildren(
      h('h3', { text: `${title}: transport.${entry.method} at ${seconds(entry.at)}` }),
      h('p', { class: 'hint', text: `Queue “${entry.queue}”, now = ${entry.at}, ${where}.` }),
      ...(outcome ? [outcome] : []),
      h('ol', { class: 'sql-statements' }, ...entry.statements.map(statement)),
      groupsTable(entry),
    );
  }
}

function statement(s: SqlTraceStatement): HTMLLIElement {
  const why = WHY.find(([start]) => s.sql.startsWith(start))?.[1];
  // Parameters in the order the ?s stand in the statement.
  const params = s.params.map((value, i) => `#${i + 1} = ${literal(value)}`).join(', ');
  const result = s.changes !== undefined ? `${s.changes} row${s.changes === 1 ? '' : 's'} changed` : s.row !== undefined ? (s.row ? `→ ${JSON.stringify(s.row)}` : '→ no row') : s.rows !== undefined ? `→ ${s.rows} rows` : '';
  return h(
    'li',
    { class: 'sql-statement', attrs: { 'data-testid': 'sql-statement' } },
    h('code', { text: s.sql }),
    params ? h('p', { class: 'sql-params', text: params }) : null,
    result ? h('p', { class: 'sql-result', text: result }) : null,
    why ? h('p', { class: 'hint', text: why }) : null,
  );
}

/** lh_groups in claim order before the call, each row's cells as before → after. */
function groupsTable(entry: SqlTraceEntry): HTMLElement {
  const after = new Map(entry.groups.after.map((row) => [row.group_id, row]));
  const before = new Map(entry.groups.before.map((row) => [row.group_id, row]));
  const ids = [...new Set([...before.keys(), ...after.keys()])];
  // For a claim: the rows ahead of the claimed one in claim order were walked past.
  const claimed = entry.groups.before.findIndex((row) => after.has(row.group_id) && after.get(row.group_id)!.claim_order !== row.claim_order);
  const rows = ids.map((id, i) => {
    const old = before.get(id);
    const now = after.get(id);
    const changed = !old || !now || COLUMNS.some((c) => old[c] !== now[c]);
    const role = claimed >= 0 && i < claimed ? 'walked past: not claimable' : i === claimed ? 'claimed' : !now ? 'deleted' : !old ? 'added' : changed ? 'changed' : '';
    return h(
      'tr',
      { class: changed ? 'sql-changed' : '', attrs: { 'data-testid': 'sql-row', 'data-group': id, 'data-changed': String(changed) } },
      ...COLUMNS.map((c) => {
        const a = old ? literal(old[c]) : '—';
        const b = now ? literal(now[c]) : '—';
        return h('td', { class: a === b ? '' : 'sql-cell-changed', text: a === b ? a : `${a} → ${b}` });
      }),
      h('td', { class: 'hint', text: role }),
    );
  });
  const more = entry.groups.total > ids.length ? h('p', { class: 'hint', text: `Showing ${ids.length} of ${entry.groups.total} groups: the front of the claim order and every changed row.` }) : null;
  return h(
    'div',
    { class: 'sql-groups' },
    h('p', { class: 'hint', text: 'lh_groups, in claim order (the order the claim walks it), before → after this call:' }),
    h('div', { class: 'sql-table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { text: c })), h('th', { text: '' }))), h('tbody', {}, ...rows))),
    more,
  );
}

function last(entries: readonly SqlTraceEntry[], methods: ReadonlySet<string>): SqlTraceEntry | undefined {
  for (let i = entries.length - 1; i >= 0; i--) if (methods.has(entries[i]!.method)) return entries[i];
  return undefined;
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return `'${value}'`;
  return String(value);
}
