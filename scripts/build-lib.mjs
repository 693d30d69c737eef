// `npm run build:lib` (and `prepack`): builds dist/ from src/ — JavaScript, declarations,
// declaration maps and source maps — starting from an empty dist/ so that nothing left over
// from an older build (a renamed or deleted file) can end up in the package.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}dist`, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`], { stdio: 'inherit' });
// tsc leaves .cjs files alone: the CommonJS stub is copied as it is.
copyFileSync(`${root}src/require.cjs`, `${root}dist/require.cjs`);
