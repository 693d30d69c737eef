/**
 * A Vitest browser provider for WebKitGTK: Vitest's own browser mode (its orchestrator page, the
 * test files in iframes, results over its WebSocket) in Debian's MiniBrowser, which Playwright
 * cannot drive (its WebKit is a patched build it downloads) and Vitest's webdriverio provider
 * refuses (it knows only `safari` as a WebKit name). The provider only has to open Vitest's page
 * in a browser: one WebDriver session (test/webkit/webdriver.ts), navigated to each URL asked.
 * No commands (userEvent, screenshots) and no module mocking: the suites it runs use neither.
 */
import { defineBrowserProvider } from '@vitest/browser';
import type { BrowserProvider } from 'vitest/node';
import { startWebKit, type WebKitSession } from './webdriver.js';

class WebKitGtkProvider implements BrowserProvider {
  readonly name = 'webkitgtk';
  // One window: Vitest runs the files one after another in iframes of one orchestrator page.
  readonly supportsParallelism = false;
  #session?: Promise<WebKitSession>;

  getCommandsContext(): Record<string, unknown> {
    return {};
  }

  async openPage(_sessionId: string, url: string): Promise<void> {
    this.#session ??= startWebKit();
    await (await this.#session).goto(url);
  }

  async close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    await (await session)?.close();
  }
}

/** `provider: webkitgtk()` in a Vitest browser project, with `instances: [{ browser: 'webkit' }]`. */
export function webkitgtk() {
  return defineBrowserProvider({
    name: 'webkitgtk',
    supportedBrowser: ['webkit'],
    options: {},
    providerFactory: () => new WebKitGtkProvider(),
  });
}
