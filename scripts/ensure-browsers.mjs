// Makes sure the browsers of the tests exist, installing Debian's packages in one apt-get when
// the machine allows it (root on Debian), as a fresh machine has Node and npm only:
//   chromium  → package chromium            (scripts/chromium.mjs)
//   firefox   → package firefox-esr         (scripts/browsers.mjs)
//   webkit    → packages webkit2gtk-driver, xvfb
// Usage: node scripts/ensure-browsers.mjs [chromium] [firefox] [webkit]   (none named: all three)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findChromium } from './chromium.mjs';
import { findFirefox, findWebKit } from './browsers.mjs';

const engines = {
  chromium: { find: findChromium, packages: ['chromium'], help: 'sudo apt-get install chromium (or CHROMIUM_PATH=… any Chromium or Chrome)' },
  firefox: { find: findFirefox, packages: ['firefox-esr'], help: 'sudo apt-get install firefox-esr (or FIREFOX_PATH=… a Firefox 128 or later)' },
  webkit: { find: () => findWebKit()?.browser, packages: ['webkit2gtk-driver', 'xvfb'], help: 'sudo apt-get install webkit2gtk-driver xvfb' },
};

const asked = process.argv.slice(2);
for (const name of asked) if (!(name in engines)) throw new Error(`unknown engine ${name}: use ${Object.keys(engines).join(', ')}`);
const wanted = asked.length > 0 ? asked : Object.keys(engines);

const missing = [];
for (const name of wanted) if (!(await engines[name].find())) missing.push(name);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (missing.length > 0 && existsSync('/usr/bin/apt-get') && isRoot) {
  const packages = missing.flatMap((name) => engines[name].packages);
  console.log(`browsers: ${missing.join(', ')} not found; installing Debian packages ${packages.join(' ')} with apt-get…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: 'inherit', env });
}

let failed = false;
for (const name of wanted) {
  const found = await engines[name].find();
  if (found) console.log(`${name}: ${found}`);
  else {
    failed = true;
    console.error(`No ${name} found for the browser tests. Install it, then run the tests again: ${engines[name].help}`);
  }
}
process.exit(failed ? 1 : 0);
