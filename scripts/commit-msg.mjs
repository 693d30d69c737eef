#!/usr/bin/env node
/**
 * The project's commit-message rules, as a git `commit-msg` hook and a checker of ranges:
 *
 *   npm run hooks                                   install the hook in this clone (or worktree)
 *   node scripts/commit-msg.mjs <message file>      check one message (what the hook runs)
 *   node scripts/commit-msg.mjs --range main..HEAD  check the commits of a range
 *
 * The rules (CONTRIBUTING.md, "Commits"): a subject of 1–72 characters that says what changed,
 * not a placeholder ("wip", "fix", "update"); a blank line between the subject and a body.
 * Lines git drops (comments, the scissors and what follows) are not checked.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_SUBJECT = 72;
const PLACEHOLDERS = /^(?:(?:wip|fix|fixes|update|updates|changes|misc|tmp|temp|stuff)[.!]*|\.+)$/i;

/**
 * What is wrong with commit message `text`, one line per rule broken; empty when it is fine.
 * @param {string} text
 * @returns {string[]}
 */
export function commitMessageProblems(text) {
  const scissors = text.indexOf('# ------------------------ >8 ------------------------');
  const lines = (scissors >= 0 ? text.slice(0, scissors) : text).split('\n').filter((line) => !line.startsWith('#'));
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  const subject = lines[0]?.trimEnd() ?? '';
  // git's own fixup!/squash! subjects are folded away by a rebase before they land.
  if (/^(fixup|squash|amend)! /.test(subject)) return [];
  const problems = [];
  if (subject === '') problems.push('the subject is empty: say what the commit changes');
  if ([...subject].length > MAX_SUBJECT) problems.push(`the subject is ${[...subject].length} characters, over ${MAX_SUBJECT}: shorten it and put the rest in the body`);
  if (/^wip\b/i.test(subject) || PLACEHOLDERS.test(subject.trim())) problems.push(`the subject ${JSON.stringify(subject)} is a placeholder: say what changed`);
  if (lines.length > 1 && lines[1].trim() !== '') problems.push('the subject runs on into a second line: leave a blank line between the subject and the body');
  return problems;
}

/** Installs the hook where git looks for this clone's (or worktree's) hooks. */
function install() {
  const hooks = resolve(execFileSync('git', ['rev-parse', '--git-path', 'hooks'], { encoding: 'utf8' }).trim());
  mkdirSync(hooks, { recursive: true });
  const script = fileURLToPath(import.meta.url);
  const hook = resolve(hooks, 'commit-msg');
  writeFileSync(hook, `#!/bin/sh\nexec node ${JSON.stringify(script)} "$1"\n`);
  chmodSync(hook, 0o755);
  console.log(`installed ${hook}: commit messages are checked against CONTRIBUTING.md's rules`);
}

function main(args) {
  if (args[0] === '--install') return install(), 0;
  if (args[0] === '--range') {
    const range = args[1];
    if (!range) throw new TypeError('--range needs a revision range, e.g. main..HEAD');
    const log = execFileSync('git', ['log', '--format=%H%x00%B%x01', range], { encoding: 'utf8' });
    let failed = 0;
    for (const entry of log.split('\x01').map((e) => e.trim()).filter(Boolean)) {
      const [hash, body] = entry.split('\x00');
      const problems = commitMessageProblems(body);
      if (problems.length === 0) continue;
      failed++;
      console.error(`${hash.slice(0, 10)} ${body.split('\n')[0]}\n  ${problems.join('\n  ')}`);
    }
    return failed === 0 ? 0 : 1;
  }
  if (args.length !== 1) {
    console.error('usage: commit-msg.mjs <message file> | --range <revisions> | --install');
    return 2;
  }
  const problems = commitMessageProblems(readFileSync(args[0], 'utf8'));
  if (problems.length === 0) return 0;
  console.error(`commit message refused (see CONTRIBUTING.md, "Commits"):\n  ${problems.join('\n  ')}`);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
