#!/usr/bin/env node
// The `flowstate` command of the npm package until its postinstall
// (install.js) puts the native binary in its place, and its fallback when
// that could not be done (npm --ignore-scripts): it runs the prebuilt
// binary that npm installed for this machine, one of this package's
// optionalDependencies (npm skips the others by their os and cpu fields),
// with the same arguments and streams, and exits as it exits.
'use strict';

const { spawnSync } = require('child_process');

const { pkg, prefix, platform, known, binary } = require('../platform.js');

function fail(message) {
  process.stderr.write(`flowstate: ${message}\n`);
  process.exit(1);
}

if (!known.includes(platform)) {
  fail(`no prebuilt binary for ${platform} (there are ${known.join(', ')}); ` +
    'build flowstate from source instead, with Go 1.25+: see https://github.com/flowstate-dev/flowstate#install-and-run');
}

let bin;
try {
  bin = binary();
} catch (err) {
  fail(`the package ${prefix}${platform}, which holds the binary for this machine, is not installed ` +
    `(npm leaves it out with --omit=optional or --no-optional): reinstall with \`npm install -g ${pkg.name}@${pkg.version}\``);
}

const run = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' });
if (run.error) {
  fail(`cannot run ${bin}: ${run.error.message}`);
}
if (run.signal) {
  process.kill(process.pid, run.signal); // die the same way, for the shell to see
}
process.exit(run.status);
