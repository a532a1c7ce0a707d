#!/usr/bin/env bash
# `npm run typecheck` and `npm run lint`: tsc and eslint with what they learned last time kept outside the repo, in
# $LOOPGUARD_CACHE/checkouts/<this checkout's path>/ (default ~/.cache/loopguard/…), so a clean clone at the same path
# finds it too. Both judge by content, not by modification times:
#   - tsc --incremental: its build info keeps each file's text hash and what depends on it, and checks again exactly
#     what a change can reach (a file, and the files whose types it feeds);
#   - eslint --cache --cache-strategy content: a file's result is kept by the hash of its text and of the config that
#     applies to it. Safe only because no rule here reads type information (eslint.config.js: typescript-eslint's
#     `recommended`, not `recommendedTypeChecked`): a rule that did could change its verdict on a file that did not.
# Measured with nothing changed (2026-12-01, 2 cores, a quiet machine): tsc 16.5 → 5.0 s of CPU (10.8 → 3.2 s of wall),
# eslint 14.1 → 1.2 s (9.2-10.2 → 1.0 s).
set -euo pipefail
cache="${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}/checkouts$PWD"
mkdir -p "$cache"
case "${1:-}" in
  typecheck) exec node_modules/.bin/tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile "$cache/tsbuildinfo" ;;
  lint) shift; exec node_modules/.bin/eslint --cache --cache-strategy content --cache-location "$cache/eslintcache" "${@:-.}" ;;
  *) echo "usage: $0 typecheck | lint [paths…]" >&2; exit 2 ;;
esac
