// The one value leasehold imports from the Workers runtime, typed structurally (see types.ts).
declare module 'cloudflare:workers' {
  export abstract class DurableObject<Env = unknown> {
    protected ctx: import('./types.js').DurableObjectStateLike;
    protected env: Env;
    constructor(ctx: import('./types.js').DurableObjectStateLike, env: Env);
  }
}

// Workers globals the object uses beyond the DOM's Request/Response/WebSocket.
declare class WebSocketPair {
  0: WebSocket;
  1: WebSocket;
}
