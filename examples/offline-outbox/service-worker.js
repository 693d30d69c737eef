// The app shell's service worker. The build (precache.js) puts PRECACHE (every file it emitted)
// and VERSION (a hash of them) in front of this file and writes it to dist/sw.js.
//
// It only serves the page's own files from its cache, so the page opens offline. It never
// touches /api requests: the outbox in the page sends those, retries them and keeps them across
// reloads and crashes. It does nothing while no tab is open (no Background Sync).
/* global PRECACHE, VERSION */
const CACHE = `offline-outbox-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(PRECACHE))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  // Every page of the app is index.html; the other files have content hashes in their names.
  const key = request.mode === 'navigate' ? new URL('./index.html', location.href).href : request.url;
  event.respondWith(caches.match(key, { cacheName: CACHE }).then((hit) => hit ?? fetch(request)));
});
