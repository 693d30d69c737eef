/**
 * leasehold/browser: the OPFS host worker and its page-side client (being built; see the issue
 * "The browser host").
 */
export {};
