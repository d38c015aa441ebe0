// Which of this package's optionalDependencies holds the flowstate binary
// for this machine, and where npm installed it: the one answer the
// launcher (bin/flowstate.js) and the postinstall (install.js) share.
'use strict';

const pkg = require('./package.json');

const prefix = '@flowstate-dev/flowstate-';
const platform = `${process.platform}-${process.arch}`;
// known are the platforms with a binary: the optionalDependencies' names
// without the prefix.
const known = Object.keys(pkg.optionalDependencies || {})
  .filter((name) => name.startsWith(prefix))
  .map((name) => name.slice(prefix.length));

// binary returns the path of this machine's binary; it throws when its
// package is not installed (npm --omit=optional).
function binary() {
  return require.resolve(`${prefix}${platform}/bin/flowstate`);
}

module.exports = { pkg, prefix, platform, known, binary };
