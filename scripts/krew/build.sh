#!/usr/bin/env bash
# Builds the stock krew CLI and krew's own plugin-manifest validator (sigs.k8s.io/krew/cmd/krew and
# cmd/validate-krew-manifest at the version pinned below, with the dependency versions of krew's own go.mod,
# checked against the Go checksum database) into a cache outside the repo, as scripts/helm/build.sh does helm.
# The krew install test (test/integration/plugin-krew.test.ts) runs both.
# Prints the cache directory (holding `krew`, `kubectl-krew` → krew, so that `kubectl krew` finds it with the
# directory on PATH, and `validate-krew-manifest`) on the last line of stdout; exit 3 when there is no Go toolchain.
set -euo pipefail

# The newest version the Go module proxy serves (`go list -m -versions sigs.k8s.io/krew`, checked 2026-11-29).
KREW_VERSION=v0.4.3
# shellcheck source=../lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/go-tool.sh"

out=$(lg_tool_dir krew "$KREW_VERSION")
lg_tool_lock "$out"
if [ -x "$out/krew" ] && [ -x "$out/validate-krew-manifest" ] && [ -L "$out/kubectl-krew" ]; then
  echo "$out"
  exit 0
fi
lg_need_go "the krew CLI for the plugin test"
lg_tool_build krew "$KREW_VERSION" "$out" "-X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" \
  "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION" "sigs.k8s.io/krew/cmd/validate-krew-manifest@$KREW_VERSION"
ln -s krew "$out.tmp/kubectl-krew"
lg_tool_publish krew "$out"
echo "$out"
