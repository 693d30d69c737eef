export interface Layer {
  name: string;
  units: string[];
  siblings?: boolean;
}
export interface ImportViolation {
  file: string;
  line: number;
  specifier: string;
  target: string;
  rule: string;
}
export declare const LAYERS: Layer[];
export declare const KNOWN_VIOLATIONS: [string, string][];
export declare function importsOf(fileName: string, text: string): { specifier: string; line: number }[];
export declare function checkImports(srcDir: string, options?: { known?: [string, string][] }): { violations: ImportViolation[]; allowed: number; stale: [string, string][] };
