export declare const MAX_SUBJECT: number;
export declare function commitMessageProblems(text: string): string[];
