// Makes sure a Chromium exists for the browser tests, installing Debian's package when the
// machine allows it. A fresh machine has Node and npm only, and Playwright cannot download
// its own browsers here (no internet beyond npm and Debian).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findChromium } from './chromium.mjs';

const found = await findChromium();
if (found) {
  console.log(`chromium: ${found}`);
  process.exit(0);
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (existsSync('/usr/bin/apt-get') && isRoot) {
  console.log('chromium: not found; installing Debian package "chromium" with apt-get…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  const installed = await findChromium();
  if (installed) {
    console.log(`chromium: ${installed}`);
    process.exit(0);
  }
}

console.error(
  [
    'No Chromium found for the browser tests.',
    'Install one of these, then run the tests again:',
    '  - Debian/Ubuntu: sudo apt-get install chromium   (gives /usr/bin/chromium)',
    '  - or Playwright\'s build: npx playwright install chromium   (needs internet access)',
    '  - or point CHROMIUM_PATH at any Chromium or Chrome binary.',
  ].join('\n'),
);
process.exit(1);
