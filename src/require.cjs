// What `require('leasehold')` (or any of its entries) runs: leasehold is ESM only, so a
// CommonJS caller gets this message instead of Node's "No exports main defined".
'use strict';
const error = new Error(
  'leasehold is an ES module package (ESM only) and cannot be loaded with require(). ' +
    "From CommonJS, load it with a dynamic import: const { InMemoryTransport } = await import('leasehold'); " +
    'or make your project ESM ("type": "module" in package.json, or .mjs files). See the Install section of the README.',
);
error.code = 'ERR_LEASEHOLD_ESM_ONLY';
throw error;
