// postinstall of @flowstate-dev/flowstate: replace bin/flowstate, the node
// launcher npm links as the `flowstate` command, by this machine's native
// binary from its platform package, so that a call starts no node (about
// 0.7 s on a small machine, against 0.04 s for the binary); esbuild's
// installer does the same. The binary must run and be of this version
// first. Whatever fails keeps the launcher, which runs the binary through
// node: the install never fails for this, and npm --ignore-scripts keeps
// it too.
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const { pkg, platform, known, binary } = require('./platform.js');

function nativeBinary() {
  if (!known.includes(platform)) {
    return null; // no binary for this platform: the launcher says so when run
  }
  try {
    return binary();
  } catch (err) {
    return null; // left out (--omit=optional): the launcher says what to do
  }
}

function main() {
  const native = nativeBinary();
  if (!native) {
    return;
  }
  const target = path.join(__dirname, 'bin', 'flowstate');
  const tmp = `${target}.native-${process.pid}`;
  try {
    try {
      fs.linkSync(native, tmp); // the same file, no copy: same file system
    } catch (err) {
      fs.copyFileSync(native, tmp);
    }
    fs.chmodSync(tmp, 0o755);
    const out = execFileSync(tmp, ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 30000 });
    const version = out.split(/\s+/)[1];
    if (version !== pkg.version) {
      throw new Error(`${native} says it is version ${version}, not ${pkg.version}`);
    }
    fs.renameSync(tmp, target);
  } catch (err) {
    try {
      fs.unlinkSync(tmp);
    } catch (ignored) {
      // not created
    }
    process.stderr.write(`flowstate: kept the node launcher as the flowstate command (${err.message}); it works, starting node on each call\n`);
  }
}

main();
