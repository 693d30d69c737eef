// The lab page: the public API on `window.leasehold`, for the console and the e2e tests.
import * as leasehold from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';

const api = { ...leasehold, openBrowserDatabase };
(window as unknown as { leasehold: typeof api }).leasehold = api;
document.querySelector('#status')!.textContent = 'ready';
