#!/usr/bin/env bash
# Builds the stock kube-apiserver and etcd pinned by go.mod into a cache outside the repo,
# keyed by a hash of go.mod + go.sum, so a version bump never reuses stale binaries.
# Prints the directory holding both binaries on its last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

k8s_version=$(awk '$1=="k8s.io/kubernetes" && NF>=2{print $2}' go.mod | head -1)
etcd_version=$(awk '$1=="go.etcd.io/etcd/server/v3" && NF>=2{print $2}' go.mod | head -1)
key=$(cat go.mod go.sum | sha256sum | cut -c1-12)
cache_root=${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}
out="$cache_root/controlplane/${k8s_version}-${etcd_version}-${key}"

if [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ]; then
  echo "$out"
  exit 0
fi

# Go is needed only to build: cached binaries serve a shell without it.
if ! command -v go >/dev/null 2>&1; then
  echo "loopguard: no 'go' on PATH; kube-apiserver and etcd for the integration tests are built from Go modules." >&2
  exit 3
fi

mkdir -p "$out.tmp"
minor=$(echo "$k8s_version" | cut -d. -f2)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
start=$(date +%s)
echo "loopguard: building kube-apiserver $k8s_version and etcd $etcd_version (first build takes 10-20 min on 2 cores)" >&2
go build -trimpath -ldflags "-s -w \
  -X k8s.io/component-base/version.gitVersion=$k8s_version \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=$minor \
  -X k8s.io/component-base/version.gitTreeState=clean" \
  -o "$out.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2
go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd_version}" \
  -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
rm -rf "$out" && mv "$out.tmp" "$out"
echo "loopguard: control plane built in $(( $(date +%s) - start ))s into $out" >&2
echo "$out"
