// The ws package (Node 20 has no global WebSocket): only the class the client needs.
declare module 'ws' {
  export const WebSocket: import('../../src/durable-object/socket.js').WebSocketClass;
}
