#!/usr/bin/env bash
# Builds the stock helm CLI (helm.sh/helm/v3/cmd/helm at the version pinned below, with the dependency versions
# of helm's own go.mod, checked against the Go checksum database) into a cache outside the repo, the same way
# test/controlplane/build.sh builds kube-apiserver: only the Go module proxy is used. The chart tests
# (test/unit/helm-chart.test.ts, test/integration/helm-chart.test.ts) run it.
# Prints the path of the helm binary on the last line of stdout; exit 3 when there is no Go toolchain.
set -euo pipefail

HELM_VERSION=v3.21.4
# shellcheck source=../lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/go-tool.sh"

out=$(lg_tool_dir helm "$HELM_VERSION")
lg_tool_lock "$out"
if [ -x "$out/helm" ]; then
  echo "$out/helm"
  exit 0
fi
lg_need_go "the helm CLI for the chart tests"
lg_tool_build helm "$HELM_VERSION" "$out" "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
  -X helm.sh/helm/v3/internal/version.gitTreeState=clean" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
lg_tool_publish helm "$out"
echo "$out/helm"
