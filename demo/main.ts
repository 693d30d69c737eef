// Placeholder until the demo issue: proves the worker + sqlite-wasm + OPFS path end to end.
const output = document.querySelector<HTMLOutputElement>('#visits')!;
const worker = new Worker(new URL('./visits.worker.ts', import.meta.url), { type: 'module' });
worker.onmessage = (event: MessageEvent<{ visits?: number; error?: string }>) => {
  output.textContent = event.data.error ? `(error: ${event.data.error})` : String(event.data.visits);
  output.dataset.ready = 'true';
};
