/**
 * The few React APIs leasehold/react calls, typed here only while the project's own install has
 * no `@types/react` (React is an optional peer: an app brings its own, with its own types).
 * Delete this file once `react` and `@types/react` are devDependencies.
 */
declare module 'react' {
  export function useSyncExternalStore<T>(subscribe: (onStoreChange: () => void) => () => void, getSnapshot: () => T, getServerSnapshot?: () => T): T;
  export function useCallback<T extends (...args: never[]) => unknown>(callback: T, deps: readonly unknown[]): T;
  export function useMemo<T>(factory: () => T, deps: readonly unknown[]): T;
}
