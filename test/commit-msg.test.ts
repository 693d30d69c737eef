/**
 * The commit-message rules a contributor installs as a hook (`npm run hooks`): the checker, the
 * hook git runs, and the range check, on a scratch repository of the test's own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commitMessageProblems } from '../scripts/commit-msg.mjs';

const SCRIPT = resolve('scripts/commit-msg.mjs');

describe('commit-message rules', () => {
  it('accepts a subject of up to 72 characters with a body after a blank line', () => {
    expect(commitMessageProblems(`${'a'.repeat(72)}\n\nWhy, and the figures.\n`)).toEqual([]);
    expect(commitMessageProblems('consume(): retry a failed ack\n# a comment git drops\n')).toEqual([]);
    expect(commitMessageProblems('fixup! consume(): retry a failed ack')).toEqual([]);
  });

  it('refuses a long subject, a placeholder, an empty message and a subject running into the body', () => {
    expect(commitMessageProblems(`${'é'.repeat(73)}\n`)).toEqual([expect.stringContaining('73 characters, over 72')]);
    for (const subject of ['wip', 'WIP: ack retries', 'fix', 'update.', '...']) expect(commitMessageProblems(subject)).toEqual([expect.stringContaining('placeholder')]);
    expect(commitMessageProblems('# only comments\n\n')).toEqual([expect.stringContaining('empty')]);
    expect(commitMessageProblems('Add the thing\nand another line')).toEqual([expect.stringContaining('blank line')]);
  });

  describe('in a repository', () => {
    const repo = mkdtempSync(join(tmpdir(), 'leasehold-commit-msg-'));
    afterAll(() => rmSync(repo, { recursive: true, force: true }));
    const git = (...args: string[]) =>
      spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' });

    it('the installed hook refuses a bad message and lets a good one through; --range names the bad commits', () => {
      execFileSync('git', ['init', '-q'], { cwd: repo });
      expect(spawnSync('node', [SCRIPT, '--install'], { cwd: repo, encoding: 'utf8' }).status).toBe(0);
      writeFileSync(join(repo, 'a.txt'), 'a');
      git('add', 'a.txt');
      const refused = git('commit', '-q', '-m', 'wip');
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain('placeholder');
      expect(git('commit', '-q', '-m', 'Add a.txt').status).toBe(0);
      writeFileSync(join(repo, 'b.txt'), 'b');
      git('add', 'b.txt');
      expect(git('commit', '-q', '--no-verify', '-m', 'x'.repeat(80)).status).toBe(0);
      const range = spawnSync('node', [SCRIPT, '--range', 'HEAD~1..HEAD'], { cwd: repo, encoding: 'utf8' });
      expect(range.status).toBe(1);
      expect(range.stderr).toContain('80 characters');
      expect(spawnSync('node', [SCRIPT, '--range', 'HEAD~1'], { cwd: repo, encoding: 'utf8' }).status).toBe(0);
    });
  });
});
