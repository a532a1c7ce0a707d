#!/usr/bin/env bash
# Builds the stock krew CLI and krew's own plugin-manifest validator (sigs.k8s.io/krew/cmd/krew and
# cmd/validate-krew-manifest at the version pinned below, with the dependency versions of krew's own go.mod,
# checked against the Go checksum database) into a cache outside the repo, as scripts/helm/build.sh does helm.
# The krew install test (test/integration/plugin-krew.test.ts) runs both.
# Prints the cache directory (holding `krew`, `kubectl-krew` → krew, so that `kubectl krew` finds it with the
# directory on PATH, and `validate-krew-manifest`) on the last line of stdout; exit 3 when there is no Go toolchain.
set -euo pipefail

KREW_VERSION=v0.4.3

cache_root=${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}
out="$cache_root/krew/$KREW_VERSION"
if [ -x "$out/krew" ] && [ -x "$out/validate-krew-manifest" ] && [ -L "$out/kubectl-krew" ]; then
  echo "$out"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="$PATH:/usr/local/go/bin"
  else
    echo "loopguard: no 'go' on PATH; the krew CLI for the plugin test is built from its Go module." >&2
    exit 3
  fi
fi

rm -rf "$out.tmp" && mkdir -p "$out.tmp"
start=$(date +%s)
echo "loopguard: building krew $KREW_VERSION (a few minutes the first time)" >&2
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$out.tmp" \
  go install -trimpath -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" \
  "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION" "sigs.k8s.io/krew/cmd/validate-krew-manifest@$KREW_VERSION" >&2
ln -s krew "$out.tmp/kubectl-krew"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "loopguard: krew built in $(( $(date +%s) - start ))s into $out" >&2
echo "$out"
