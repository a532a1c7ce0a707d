# Shared by the scripts/*/build.sh of helm, krew, Envoy Gateway and CoreDNS (sourced, not run): a stock Go tool
# built from its module (the versions of its own go.mod, checked against the Go checksum database, only the Go module
# proxy used) into a cache outside the repo, ~/.cache/loopguard/<tool>/<version>, replaced whole so a killed build
# leaves none.

# The cache directory of a tool's version: lg_tool_dir helm v3.21.4
lg_tool_dir() {
  echo "${LOOPGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopguard}/$1/$2"
}

# Holds "$1.lock" until the calling script exits, so that one build of a tool's version runs at a time: on a fresh
# machine two suites side by side need the same tool (coredns and dns-managed: CoreDNS), and the second build removed
# the first's "$out.tmp" under it. The second waits, then finds the tool built. Taken before the cache is looked at.
#   lg_tool_lock OUT
lg_tool_lock() {
  command -v flock >/dev/null 2>&1 || return 0 # util-linux; without it, builds are not serialized (as before)
  mkdir -p "$(dirname "$1")"
  exec 9>"$1.lock"
  flock 9
}

# Go on PATH (Debian's machines keep it in /usr/local/go/bin); exit 3, "cannot be built here", without it.
#   $1: what the tool is for, for the message
lg_need_go() {
  command -v go >/dev/null 2>&1 && return 0
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="$PATH:/usr/local/go/bin"
    return 0
  fi
  echo "loopguard: no 'go' on PATH; $1 is built from Go modules." >&2
  exit 3
}

# Builds packages into "$out.tmp"; the caller adds what else belongs there, then calls lg_tool_publish.
#   lg_tool_build NAME VERSION OUT LDFLAGS PACKAGE@VERSION...
lg_tool_build() {
  local name=$1 version=$2 out=$3 ldflags=$4
  shift 4
  rm -rf "$out.tmp" && mkdir -p "$out.tmp"
  lg_tool_started=$(date +%s)
  echo "loopguard: building $name $version (a few minutes the first time)" >&2
  # 9>&-: the lock's descriptor (lg_tool_lock) stays with this script, not with go's processes.
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$out.tmp" go install -trimpath -ldflags "-s -w $ldflags" "$@" >&2 9>&-
}

# Moves "$out.tmp" to "$out".   lg_tool_publish NAME OUT
lg_tool_publish() {
  rm -rf "$2" && mv "$2.tmp" "$2"
  echo "loopguard: $1 built in $(( $(date +%s) - lg_tool_started ))s into $2" >&2
}
