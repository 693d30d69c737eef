/** A TCP port on 127.0.0.1 that nobody listens on right now (the OS picks it). */
export declare function freePort(): Promise<number>;
