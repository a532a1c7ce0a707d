#!/usr/bin/env bash
# Builds the stock CoreDNS server (github.com/coredns/coredns at the version pinned below, with the dependency
# versions of its own go.mod, checked against the Go checksum database) into a cache outside the repo, as
# scripts/envoy-gateway/build.sh does Envoy Gateway: nothing is downloaded but Go modules. The DNS test
# (test/integration/coredns.test.ts) runs it against the test apiserver. The module's own plugin.cfg is what is
# compiled in (kubernetes, rewrite, template, hosts, file, reload, prometheus, forward, ... and the Caddyfile's own
# `import`), so the binary answers as the CoreDNS a cluster ships does.
# Prints the cache directory (holding `coredns`) on the last line of stdout; exit 3 when there is no Go toolchain.
set -euo pipefail

# The newest version the Go module proxy serves (`go list -m -versions github.com/coredns/coredns`, checked
# 2026-11-29); its go.mod asks for go 1.26.0, which the machine's Go 1.26 satisfies.
COREDNS_VERSION=v1.15.0
COREDNS_MODULE=github.com/coredns/coredns
# shellcheck source=../lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/go-tool.sh"

out=$(lg_tool_dir coredns "$COREDNS_VERSION")
lg_tool_lock "$out"
if [ -x "$out/coredns" ]; then
  echo "$out"
  exit 0
fi
lg_need_go "CoreDNS for the DNS test"
# GitCommit names the release, as `coredns -version` prints it; the module zip has no git history to stamp.
lg_tool_build coredns "$COREDNS_VERSION" "$out" "-X $COREDNS_MODULE/coremain.GitCommit=$COREDNS_VERSION" \
  "$COREDNS_MODULE@$COREDNS_VERSION"
lg_tool_publish coredns "$out"
echo "$out"
