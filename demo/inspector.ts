// An app page that mounts <leasehold-inspector> on its own queue (a browser database), or on a
// server's (leasehold/inspector/http), loading the inspector only when it is first shown.
import type { Transport } from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';

const params = new URLSearchParams(location.search);
const http = params.get('http');
const w = window as unknown as { db?: Awaited<ReturnType<typeof openBrowserDatabase>>; inspectorLoaded?: boolean };
let transport: Transport;
if (http) {
  const { httpTransport } = await import('leasehold/inspector');
  transport = httpTransport(http);
} else {
  // ?hold=yes: a refused message holds its group, as a record's create does in an outbox.
  w.db = await openBrowserDatabase({ name: params.get('db') ?? 'inspector-app', maxAttempts: 1, ...(params.get('hold') === 'yes' ? { onDeadLetter: 'hold' as const } : {}) });
  transport = w.db.transport;
}

document.querySelector('#show')!.addEventListener('click', () => {
  void (async () => {
    // The entry is fetched here, at the first click: the page paid nothing for it before.
    const { defineInspector } = await import('leasehold/inspector');
    w.inspectorLoaded = true;
    defineInspector();
    const inspector = document.createElement('leasehold-inspector');
    inspector.actions = params.get('actions') !== 'no';
    // Notices only, no poll: what the page shows came through a change notice (or a hold's end).
    if (params.get('poll') === 'no') inspector.pollMs = null;
    inspector.transport = transport;
    document.querySelector('#slot')!.replaceChildren(inspector);
  })();
});
document.querySelector('#status')!.textContent = 'ready';
