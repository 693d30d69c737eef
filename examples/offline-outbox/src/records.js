// What this browser shows of its notes and tasks, kept in localStorage: the page's local copy,
// updated the moment the user acts (the outbox then carries each change to the server). Every
// tab of the origin shares it; a `storage` event tells the other tabs.

const KEY = 'offline-outbox:records';

/** `{ notes: [{ id, text, tasks: [{ id, text }] }] }`, oldest note first. */
export function loadRecords() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? 'null');
    if (Array.isArray(saved?.notes)) return saved;
  } catch {
    // An unreadable copy is replaced by the next change.
  }
  return { notes: [] };
}

/** Applies `change` to the stored records and saves them; returns the result. */
export function updateRecords(change) {
  const records = loadRecords();
  change(records);
  localStorage.setItem(KEY, JSON.stringify(records));
  return records;
}

/** Calls `listener` when another tab changed the records. */
export function onRecordsChange(listener) {
  addEventListener('storage', (event) => event.key === KEY && listener());
}
