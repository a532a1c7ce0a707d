# Shared by scripts/image/*.sh (sourced, not run).

image_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$image_dir/../.." && pwd)
image_cache=${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}/images

log() { echo "loopguard image: $*" >&2; }

# Debian installs debootstrap (and chroot) in /usr/sbin, which a non-login shell or a CI environment may leave off
# PATH: without it, an installed debootstrap reads as missing.
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH="$PATH:/usr/sbin:/sbin" ;; esac

lg_podman() { "$image_dir/podman.sh" "$@"; }

# Exit status 3 means "podman cannot be installed or used on this machine": the image test's gate skips on it
# (and fails instead under LOOPGUARD_REQUIRE_IMAGE_TEST=true, as in .ci/run). Every other failure is a failure.
unavailable() {
  log "$*"
  exit 3
}

# Installs the Debian packages the image build needs when one is missing (as root; else names them).
#   $@: the commands needed, e.g. podman debootstrap strip
ensure_tools() {
  local missing=() cmd
  for cmd in "$@"; do command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  # One package list for every tool: podman needs runc here (crun refuses cgroups in hybrid mode), buildah
  # backs `podman build`, strip comes with binutils.
  local packages=(podman buildah runc debootstrap binutils)
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    unavailable "missing ${missing[*]}; install the Debian packages ${packages[*]} (apt-get install as root)"
  fi
  log "installing ${packages[*]} (missing: ${missing[*]})"
  if ! { apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${packages[@]}"; } >&2; then
    unavailable "apt-get install ${packages[*]} failed"
  fi
  for cmd in "${missing[@]}"; do command -v "$cmd" >/dev/null 2>&1 || unavailable "$cmd still missing after apt-get install"; done
}

# podman installed and able to use its storage and runtime here.
ensure_podman() {
  ensure_tools podman
  local out
  if ! out=$(lg_podman info --format '{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}' 2>&1); then
    unavailable "podman cannot be used here: $(echo "$out" | tail -n 3)"
  fi
}
