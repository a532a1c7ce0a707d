#!/usr/bin/env bash
# Builds the stock Envoy Gateway controller (github.com/envoyproxy/gateway/cmd/envoy-gateway at the version pinned
# below, with the dependency versions of its own go.mod, checked against the Go checksum database) into a cache
# outside the repo, as scripts/helm/build.sh does helm, and copies beside it the CRDs that the same module zip ships
# (its Helm chart's Gateway API CRDs, of the gateway-api version its go.mod names, and Envoy Gateway's own
# gateway.envoyproxy.io CRDs): nothing is downloaded but Go modules. The Gateway test
# (test/integration/gateways.test.ts) runs the controller against the test apiserver.
# Prints the cache directory (holding `envoy-gateway` and crds/*.yaml) on the last line of stdout; exit 3 when
# there is no Go toolchain.
set -euo pipefail

# The newest version the Go module proxy serves (`go list -m -versions github.com/envoyproxy/gateway`, checked
# 2026-11-29); its go.mod asks for go 1.26.7, which the machine's Go 1.26 satisfies.
EG_VERSION=v1.9.1
EG_MODULE=github.com/envoyproxy/gateway
# shellcheck source=../lib/go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/go-tool.sh"

out=$(lg_tool_dir envoy-gateway "$EG_VERSION")
lg_tool_lock "$out"
if [ -x "$out/envoy-gateway" ] && [ -s "$out/crds/gatewayapi-crds.yaml" ] && [ -s "$out/crds/gateway.envoyproxy.io_envoyproxies.yaml" ]; then
  echo "$out"
  exit 0
fi
lg_need_go "the Envoy Gateway controller for the Gateway test"
lg_tool_build envoy-gateway "$EG_VERSION" "$out" "-X $EG_MODULE/internal/cmd/version.envoyGatewayVersion=$EG_VERSION" \
  "$EG_MODULE/cmd/envoy-gateway@$EG_VERSION"
# The module zip go install just fetched (and verified) holds the CRDs as EG's chart installs them.
src=$(GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$EG_MODULE@$EG_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
crds="$src/charts/gateway-helm/charts/crds/crds"
echo "loopguard: copying the CRDs from $crds" >&2
mkdir -p "$out.tmp/crds"
cp "$crds/gatewayapi-crds.yaml" "$crds"/generated/*.yaml "$out.tmp/crds/"
chmod -R u+w "$out.tmp/crds"
lg_tool_publish envoy-gateway "$out"
echo "$out"
