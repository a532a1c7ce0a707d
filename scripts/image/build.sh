#!/usr/bin/env bash
# npm run image: builds loopguard's image from the Dockerfile with podman, tagged <name>:<version> and
# <name>:<commit> (name: $LOOPGUARD_IMAGE, default loopguard; version from package.json; commit from git, with
# -dirty when tracked files differ from HEAD).
#
# Bases (LOOPGUARD_IMAGE_BASES):
#   auto (default)  the Dockerfile's public bases when they are present or can be pulled, else local ones;
#   public | local  only those. Local bases are built once by scripts/image/bases.sh and cached.
#   LOOPGUARD_BUILD_IMAGE / LOOPGUARD_RUNTIME_IMAGE name bases of your own instead.
# podman runs with scripts/image/podman.sh's settings (vfs storage, runc, cgroupfs, no default ulimits), so
# the image is in the vfs store: `scripts/image/podman.sh images loopguard`.
# `--check` only makes sure podman is installed (apt-get as root) and usable.
#
# Last lines on stdout: IMAGE=, COMMIT=, VERSION=, SIZE_BYTES= (progress and timings on stderr).
# Exit status 3: podman cannot be installed or used here.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_podman
[ "${1:-}" = --check ] && exit 0
t0=$(date +%s)

name=${LOOPGUARD_IMAGE:-loopguard}
# How podman names it: an unqualified name goes to localhost/.
case "${name%%/*}" in
  *.*|*:*|localhost) ref=$name ;;
  *) ref=localhost/$name ;;
esac
report() {
  echo "IMAGE=$ref:$version"
  echo "COMMIT=$commit"
  echo "VERSION=$version"
  echo "SIZE_BYTES=$1"
}
version=$(node -p "require(process.argv[1]).version" "$repo_root/package.json")
commit=unknown
if git -C "$repo_root" rev-parse --git-dir >/dev/null 2>&1; then
  commit=$(git -C "$repo_root" rev-parse --short=12 HEAD)
  git -C "$repo_root" diff --quiet HEAD -- || commit=$commit-dirty
fi

# The Dockerfile's defaults, read from it so that there is one place to change them.
default_arg() { sed -n "s/^ARG $1=//p" "$repo_root/Dockerfile" | head -n 1; }
build_image=${LOOPGUARD_BUILD_IMAGE:-}
runtime_image=${LOOPGUARD_RUNTIME_IMAGE:-}
if [ -z "$build_image" ] || [ -z "$runtime_image" ]; then
  mode=${LOOPGUARD_IMAGE_BASES:-auto}
  public_build=$(default_arg BUILD_IMAGE)
  public_runtime=$(default_arg RUNTIME_IMAGE)
  have_public() {
    local base err
    for base in "$public_build" "$public_runtime"; do
      lg_podman image exists "$base" && continue
      log "pulling $base"
      if ! err=$(timeout 120 "$image_dir/podman.sh" pull --quiet "$base" 2>&1 >/dev/null); then
        log "cannot pull $base: $(tail -n 1 <<<"$err")"
        return 1
      fi
    done
  }
  case "$mode" in
    public) have_public || { log "LOOPGUARD_IMAGE_BASES=public, but the public bases cannot be had"; exit 1; }
      build_image=$public_build runtime_image=$public_runtime ;;
    auto) if have_public; then
        build_image=$public_build runtime_image=$public_runtime
      else
        log "using locally built bases (scripts/image/bases.sh)"
        bases=$("$image_dir/bases.sh")
        build_image=$(sed -n 's/^BUILD_IMAGE=//p' <<<"$bases")
        runtime_image=$(sed -n 's/^RUNTIME_IMAGE=//p' <<<"$bases")
      fi ;;
    local) bases=$("$image_dir/bases.sh")
      build_image=$(sed -n 's/^BUILD_IMAGE=//p' <<<"$bases")
      runtime_image=$(sed -n 's/^RUNTIME_IMAGE=//p' <<<"$bases") ;;
    *) log "LOOPGUARD_IMAGE_BASES=$mode: expected auto, public or local"; exit 2 ;;
  esac
fi
t1=$(date +%s)

# The CA bundle this machine's Node and npm trust besides their own (a TLS-inspecting proxy on the way to the npm
# registry): a build secret, so that it is in no layer.
secret=()
ca=${NODE_EXTRA_CA_CERTS:-}
[ -n "$ca" ] || ca=$(npm config get cafile 2>/dev/null || true)
if [ -n "$ca" ] && [ -s "$ca" ]; then secret=(--secret "id=npm-ca,src=$ca"); fi

# Everything the image is made of: when an image with these inputs is already tagged, there is nothing to build
# (a podman build whose every step is cached still takes about a minute on vfs).
inputs=$( {
  (cd "$repo_root" && find Dockerfile .dockerignore package.json package-lock.json tsconfig.json LICENSE src scripts/build-operator.ts scripts/lib/bundle.ts \
    -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  lg_podman image inspect --format '{{.Id}}' "$build_image" "$runtime_image"
  echo "$name $version $commit ${#secret[@]}"
} | sha256sum | cut -c1-16)
label=dev.loopguard.build-inputs
if [ "$(lg_podman image inspect --format "{{index .Labels \"$label\"}}" "$name:$version" 2>/dev/null)" = "$inputs" ] &&
  [ "$(lg_podman image inspect --format '{{.Id}}' "$name:$version")" = "$(lg_podman image inspect --format '{{.Id}}' "$name:$commit" 2>/dev/null)" ]; then
  size=$(lg_podman image inspect --format '{{.Size}}' "$name:$version")
  log "$name:$version ($name:$commit) is up to date: $(( size / 1000000 )) MB; checked in $(( $(date +%s) - t0 ))s"
  report "$size"
  exit 0
fi

log "building $name:$version (commit $commit) on $build_image / $runtime_image"
build_args=(
  --build-arg "BUILD_IMAGE=$build_image"
  --build-arg "RUNTIME_IMAGE=$runtime_image"
  --build-arg "LOOPGUARD_COMMIT=$commit"
  --build-arg "LOOPGUARD_VERSION=$version"
  --build-arg "LOOPGUARD_INPUTS=$inputs"
  "${secret[@]}"
  --label "$label=$inputs"
)
# --network host: npm ci reaches the npm registry the way this machine does (no CNI networking here).
# The dependencies' stage gets a tag of its own, so that the clean-up below keeps it as a cache.
lg_podman build --layers --network host "${build_args[@]}" --target deps -t "$name-cache:deps" \
  -f "$repo_root/Dockerfile" "$repo_root" >&2
lg_podman build --layers --network host "${build_args[@]}" -t "$name:$version" -t "$name:$commit" \
  -f "$repo_root/Dockerfile" "$repo_root" >&2

# vfs stores every layer as a full copy of the tree: drop what earlier builds left behind. Tags of older commits
# go, then every untagged image of ours (they carry the label) without children, until none is left.
for tag in $(lg_podman images --format '{{.Tag}}' "$ref"); do
  if [[ "$tag" =~ ^[0-9a-f]{7,40}(-dirty)?$ ]] && [ "$tag" != "$commit" ]; then lg_podman untag "$ref:$tag" >/dev/null || true; fi
done
for _ in 1 2 3 4 5 6 7 8 9 10; do
  stale=$(lg_podman images --quiet --filter dangling=true --filter "label=$label")
  [ -n "$stale" ] || break
  # shellcheck disable=SC2086
  lg_podman rmi $stale >/dev/null 2>&1 || true
done
t2=$(date +%s)

size=$(lg_podman image inspect --format '{{.Size}}' "$name:$version")
log "built $name:$version ($name:$commit): $(( size / 1000000 )) MB; bases $(( t1 - t0 ))s, podman build $(( t2 - t1 ))s, total $(( t2 - t0 ))s"
report "$size"
