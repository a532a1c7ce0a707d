#!/usr/bin/env bash
# Builds the stock kube-apiserver and etcd pinned by go.mod into a cache outside the repo,
# keyed by a hash of the go.mod + go.sum files used, so a version bump never reuses stale binaries.
# Prints the directory holding both binaries on its last line of stdout.
#
# usage: build.sh [<minor>]
#   no argument: the default test ground, kube-apiserver and etcd both pinned by ./go.mod;
#   <minor> (e.g. 1.28): kube-apiserver pinned by versions/<minor>/go.mod, etcd still from ./go.mod (etcd 3.5
#   serves every minor we test, and one etcd build is shared by all of them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

module_version() { awk -v m="$1" '$1==m && NF>=2{print $2; exit} $1=="require" && $2==m{print $3; exit}' "$2"; }

default_k8s=$(module_version k8s.io/kubernetes go.mod)
default_minor=$(echo "$default_k8s" | cut -d. -f1-2 | tr -d v)
minor=${1:-$default_minor}
if [ "$minor" = "$default_minor" ]; then
  api_dir=$here
else
  api_dir=$here/versions/$minor
  if [ ! -f "$api_dir/go.mod" ]; then
    echo "loopguard: no test ground for Kubernetes $minor; available: $default_minor (default) $(ls "$here/versions" | tr '\n' ' ')" >&2
    exit 2
  fi
fi

k8s_version=$(module_version k8s.io/kubernetes "$api_dir/go.mod")
etcd_version=$(module_version go.etcd.io/etcd/server/v3 go.mod)
# The default's key hashes its go.mod + go.sum only, as it always has, so an existing cache stays valid.
if [ "$api_dir" = "$here" ]; then key_files=(go.mod go.sum); else key_files=(go.mod go.sum "$api_dir/go.mod" "$api_dir/go.sum"); fi
key=$(cat "${key_files[@]}" | sha256sum | cut -c1-12)
cache_root=${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}
out="$cache_root/controlplane/${k8s_version}-${etcd_version}-${key}"
# One build of a key at a time (two suites that start a minor's control plane together would each remove the other's
# "$out.tmp"); the second waits, then finds it built.
# shellcheck source=../../scripts/lib/go-tool.sh
source "$here/../../scripts/lib/go-tool.sh"
lg_tool_lock "$out"

if [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ]; then
  echo "$out"
  exit 0
fi

# Go is needed only to build: cached binaries serve a shell without it. Only PATH is looked at (not lg_need_go's
# /usr/local/go/bin): without Go the integration tests fail naming the ways out (test/unit/controlplane-build.test.ts).
if ! command -v go >/dev/null 2>&1; then
  echo "loopguard: no 'go' on PATH; kube-apiserver and etcd for the integration tests are built from Go modules." >&2
  exit 3
fi

rm -rf "$out.tmp" && mkdir -p "$out.tmp"
k8s_minor=$(echo "$k8s_version" | cut -d. -f2)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
lg_tool_started=$(date +%s)
echo "loopguard: building kube-apiserver $k8s_version and etcd $etcd_version (first build takes 10-20 min on 2 cores)" >&2
linkname=""
(cd "$api_dir" && go build -trimpath -ldflags "-s -w $linkname \
  -X k8s.io/component-base/version.gitVersion=$k8s_version \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=$k8s_minor \
  -X k8s.io/component-base/version.gitTreeState=clean" \
  -o "$out.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) >&2 9>&-
go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd_version}" \
  -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3 >&2 9>&-
lg_tool_publish "kube-apiserver $k8s_version and etcd $etcd_version" "$out"
echo "$out"
