// Lint, type-aware: the rules that catch real bugs in a library of promises, not style (the
// formatting is the code's own). Part of `npm test` (`npm run lint`).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-demo/**', 'node_modules/**', 'test-results/**', 'bench/results/**', '.tmp/**', 'examples/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // Types from the project's own tsconfigs, found per file.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // A promise nobody awaits loses its rejection: an unhandled error, or a write that
      // silently never happened. `void p` says "fire and forget" on purpose (and is allowed).
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a callback's return is ignored (an event listener, a timer, a
      // forEach) turns its rejection into an unhandled one.
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
