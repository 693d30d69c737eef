// A CommonJS Vite config (what Vite also makes of vite.config.js in a project that is not
// "type": "module"): it require()s the plugin, which Node 20.19+ and 22.12+ (the versions
// Vite 8 runs on) load although it is an ES module.
const { leasehold } = require('leasehold/vite');

module.exports = { plugins: [leasehold()], logLevel: 'warn' };
