export declare const firefoxPrefs: Record<string, string | number | boolean>;
export declare function findFirefox(): string | undefined;
export declare function firefoxLaunchOptions(executablePath?: string): { channel: string; executablePath: string | undefined; firefoxUserPrefs: Record<string, string | number | boolean> };
export declare function findWebKit(): { driver: string; browser: string; xvfb: string } | undefined;
