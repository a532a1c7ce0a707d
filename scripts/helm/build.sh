#!/usr/bin/env bash
# Builds the stock helm CLI (helm.sh/helm/v3/cmd/helm at the version pinned below, with the dependency versions
# of helm's own go.mod, checked against the Go checksum database) into a cache outside the repo, the same way
# test/controlplane/build.sh builds kube-apiserver: only the Go module proxy is used. The chart tests
# (test/unit/helm-chart.test.ts, test/integration/helm-chart.test.ts) run it.
# Prints the path of the helm binary on the last line of stdout; exit 3 when there is no Go toolchain.
set -euo pipefail

HELM_VERSION=v3.21.4

cache_root=${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}
out="$cache_root/helm/$HELM_VERSION"
if [ -x "$out/helm" ]; then
  echo "$out/helm"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="$PATH:/usr/local/go/bin"
  else
    echo "loopguard: no 'go' on PATH; the helm CLI for the chart tests is built from its Go module." >&2
    exit 3
  fi
fi

rm -rf "$out.tmp" && mkdir -p "$out.tmp"
start=$(date +%s)
echo "loopguard: building helm $HELM_VERSION (a few minutes the first time)" >&2
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$out.tmp" \
  go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
rm -rf "$out" && mv "$out.tmp" "$out"
echo "loopguard: helm built in $(( $(date +%s) - start ))s into $out" >&2
echo "$out/helm"
