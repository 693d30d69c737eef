export declare const repoRoot: string;
export declare function packLeasehold(destination: string): { tarball: string; files: string[] };
