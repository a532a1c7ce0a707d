#!/usr/bin/env bash
# Builds the two base images the Dockerfile takes as build arguments, for machines that cannot pull the public
# ones (no registry reachable). Only Debian packages and the npm `node` package are used:
#   - a Debian bookworm root filesystem (debootstrap --variant=minbase, plus ca-certificates, with the
#     bookworm-security updates);
#   - Node 24: the binary of the npm package `node` pinned in package.json (node_modules/node, else
#     `npm pack node-linux-<arch>@<version>` from the npm registry), stripped of its debug symbols.
# BUILD base (replaces node:24-bookworm-slim): that Debian + node + this machine's npm, to run `npm ci` and tsc.
# RUNTIME base (replaces gcr.io/distroless/nodejs24-debian13:nonroot): no shell and no package manager, only
#   /nodejs/bin/node (distroless' path), the shared libraries it loads, the CA bundle, /etc/passwd and
#   /etc/group with nonroot (65532), /tmp, their Debian copyright files and Node's LICENSE; USER 65532:65532.
# Both are cached outside the repo, in $LOOPGUARD_CACHE/images (default ~/.cache/loopguard/images), keyed by a
# hash of these scripts, the node binary and npm's version: a second run only checks that the images exist
# (or re-imports them from the cached tarballs). LOOPGUARD_IMAGE_REFRESH_BASES=true builds them again (e.g. for
# newer Debian security updates).
# Prints BUILD_IMAGE=… and RUNTIME_IMAGE=… on stdout; progress goes to stderr.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

suite=bookworm
mirror=${LOOPGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${LOOPGUARD_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
ensure_podman
ensure_tools debootstrap strip
[ "$(id -u)" = 0 ] || unavailable "building the base images needs root (debootstrap, chroot)"

case "$(uname -m)" in
  x86_64) node_arch=x64 ;;
  aarch64) node_arch=arm64 ;;
  *) log "no npm node binary for $(uname -m)"; exit 1 ;;
esac
node_version=$(node -p "require(process.argv[1]).devDependencies.node" "$repo_root/package.json")
case "$node_version" in 24.*) ;; *) log "package.json pins node $node_version, expected 24.x"; exit 1 ;; esac

# The npm `node` package's binary: node_modules/node/bin/node (npm ci installs it), else fetched from the npm
# registry at the pinned version.
work=$(mktemp -d "${TMPDIR:-/tmp}/loopguard-bases.XXXXXX")
cleanup() {
  # Never recurse into a /proc or /dev that a failed debootstrap left mounted in the tree.
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
node_bin=$repo_root/node_modules/node/bin/node
node_license=$repo_root/node_modules/node/node_modules/node-linux-$node_arch/LICENSE
if [ ! -x "$node_bin" ] || [ "$("$node_bin" --version 2>/dev/null)" != "v$node_version" ]; then
  log "node_modules/node is not Node $node_version; fetching node-linux-$node_arch@$node_version from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-$node_arch@$node_version" >/dev/null && tar -xzf ./*.tgz)
  node_bin=$work/package/bin/node
  node_license=$work/package/LICENSE
fi
# The machine's npm (the one that ran `npm ci`) runs `npm ci` in the build base: pure JavaScript.
npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
npm_version=$(node -p "require(process.argv[1]).version" "$npm_dir/package.json")

key=$( { cat "$image_dir/bases.sh" "$image_dir/lib.sh"; sha256sum <"$node_bin"; echo "npm $npm_version $suite $mirror $(uname -m)"; } | sha256sum | cut -c1-16)
build_image=localhost/loopguard-base-build:$key
runtime_image=localhost/loopguard-base-runtime:$key
out=$image_cache/bases-$key

if [ "${LOOPGUARD_IMAGE_REFRESH_BASES:-}" = true ]; then
  rm -rf "$out"
  lg_podman rmi -f "$build_image" "$runtime_image" >/dev/null 2>&1 || true
fi
if lg_podman image exists "$build_image" && lg_podman image exists "$runtime_image"; then
  log "bases $key: cached"
  echo "BUILD_IMAGE=$build_image"
  echo "RUNTIME_IMAGE=$runtime_image"
  exit 0
fi

start=$(date +%s)
if [ ! -f "$out/build.tar" ] || [ ! -f "$out/runtime.tar" ]; then
  log "building bases $key: Debian $suite (minbase) + Node $node_version + npm $npm_version"
  rm -rf "$out.tmp"
  mkdir -p "$out.tmp"
  rootfs=$work/rootfs
  debootstrap --variant=minbase --include=ca-certificates "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; log "debootstrap failed"; exit 1; }
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
    "$mirror" "$suite" "$mirror" "$suite" "$security_mirror" "$suite" >"$rootfs/etc/apt/sources.list"
  chroot "$rootfs" env -i DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    sh -c 'apt-get update -qq && apt-get upgrade -y -qq' >"$work/upgrade.log" 2>&1 ||
    { tail -n 20 "$work/upgrade.log" >&2; log "security upgrade failed"; exit 1; }
  log "Debian root filesystem ready after $(( $(date +%s) - start ))s"

  # Node and npm into the build base.
  install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
  strip --strip-all "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  [ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v$node_version" ] || { log "node does not run in the build base"; exit 1; }

  # The runtime base: node, the libraries ldd lists for it (resolved inside the Debian tree, copied to their
  # merged-/usr directory under the name the loader asks for), the CA bundle, users, /tmp.
  rt=$work/runtime
  mkdir -p "$rt"/{nodejs/bin,etc/ssl/certs,usr/lib,usr/lib64,usr/share/doc,tmp,home/nonroot}
  ln -s usr/lib "$rt/lib"
  ln -s usr/lib64 "$rt/lib64"
  cp "$rootfs/usr/local/bin/node" "$rt/nodejs/bin/node"
  [ -f "$node_license" ] && cp "$node_license" "$rt/nodejs/LICENSE"
  for lib in $(chroot "$rootfs" ldd /usr/local/bin/node | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    real=$(chroot "$rootfs" readlink -f "$lib")
    dir=$(chroot "$rootfs" readlink -f "$(dirname "$lib")")
    mkdir -p "$rt$dir"
    cp "$rootfs$real" "$rt$dir/$(basename "$lib")"
  done
  cp "$rootfs/etc/ssl/certs/ca-certificates.crt" "$rt/etc/ssl/certs/"
  for pkg in libc6 libgcc-s1 libstdc++6 ca-certificates; do
    mkdir -p "$rt/usr/share/doc/$pkg"
    cp "$rootfs/usr/share/doc/$pkg/copyright" "$rt/usr/share/doc/$pkg/"
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rt/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$rt/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rt/etc/nsswitch.conf"
  chmod 1777 "$rt/tmp"
  chown 65532:65532 "$rt/home/nonroot"
  chmod 0700 "$rt/home/nonroot"
  # No shell in the runtime base: node runs straight from it, as the user it will run as.
  for sh in bin/sh bin/bash usr/bin/sh usr/bin/bash; do [ ! -e "$rt/$sh" ] || { log "runtime base has /$sh"; exit 1; }; done
  chroot --userspec=65532:65532 "$rt" /nodejs/bin/node -e \
    'require("fs").accessSync("/etc/ssl/certs/ca-certificates.crt"); if (process.getuid() !== 65532) process.exit(1)' ||
    { log "node does not run in the runtime base"; exit 1; }

  # The build base: only what npm ci and tsc need to run (docs, locales and apt's caches go).
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/{doc,man,info,locale}/* \
    "$rootfs"/var/log/* "$rootfs"/var/cache/debconf/*-old "$rootfs"/tmp/*
  tar --numeric-owner -C "$rootfs" -cf "$out.tmp/build.tar" .
  tar --numeric-owner -C "$rt" -cf "$out.tmp/runtime.tar" .
  rm -rf "$rootfs" "$rt"
  # One set of bases at a time: drop those of older keys (and their images).
  for old in "$image_cache"/bases-*; do
    [ -d "$old" ] && [ "$old" != "$out.tmp" ] || continue
    old_key=${old##*/bases-}
    lg_podman rmi -f "localhost/loopguard-base-build:$old_key" "localhost/loopguard-base-runtime:$old_key" >/dev/null 2>&1 || true
    rm -rf "$old"
  done
  rm -rf "$out"
  mv "$out.tmp" "$out"
fi

lg_podman import --quiet \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  "$out/build.tar" "$build_image" >/dev/null
lg_podman import --quiet \
  --change 'ENV PATH=/nodejs/bin' \
  --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
  --change 'USER 65532:65532' \
  --change 'WORKDIR /home/nonroot' \
  --change 'ENTRYPOINT ["/nodejs/bin/node"]' \
  "$out/runtime.tar" "$runtime_image" >/dev/null
log "bases $key: built and imported in $(( $(date +%s) - start ))s"
echo "BUILD_IMAGE=$build_image"
echo "RUNTIME_IMAGE=$runtime_image"
