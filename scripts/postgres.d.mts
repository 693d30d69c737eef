export interface ThrowawayPostgres {
  url: string;
  port: number;
  dataDir: string;
  restart(mode?: 'smart' | 'fast' | 'immediate'): void;
  crash(): void;
  start(): void;
  stop(): void;
}
export interface StartOptions {
  fast?: boolean;
  settings?: Record<string, string>;
  label?: string;
}
export declare function findPostgresBin(): string | undefined;
export declare function freePort(): Promise<number>;
export declare function reapStaleClusters(): string[];
export declare function startThrowawayPostgres(options?: StartOptions): Promise<ThrowawayPostgres>;
export declare function startPostgres(options?: StartOptions): Promise<{ url: string; throwaway: boolean; stop(): void }>;
