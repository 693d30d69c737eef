// What `require('leasehold')` (or any of its entries) runs on a Node that cannot require() an ES
// module (before 20.19 and 22.12). Newer Nodes match the entries' "module-sync" condition first
// and load the ES module itself, so require() works there; this says what to do elsewhere,
// instead of Node's "No exports main defined".
'use strict';
const error = new Error(
  'leasehold is an ES module package, and this Node cannot require() an ES module (Node 20.19+ and 22.12+ can). ' +
    "Upgrade Node, or load it with a dynamic import: const { InMemoryTransport } = await import('leasehold'); " +
    'or make your project ESM ("type": "module" in package.json, or .mjs files). See the Install section of the README.',
);
error.code = 'ERR_LEASEHOLD_ESM_ONLY';
throw error;
