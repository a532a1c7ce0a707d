#!/usr/bin/env bash
# podman with the settings the loopguard scripts and tests use (what the project's build machines need, see below):
#   - containers.conf next to this file (no default ulimits, runc, cgroupfs), unless CONTAINERS_CONF is set;
#   - the vfs storage driver (overlay is not available on these machines), unless
#     LOOPGUARD_PODMAN_STORAGE_DRIVER names another one (e.g. overlay where it works: much faster).
# Usage: scripts/image/podman.sh ARGS...   (e.g. `scripts/image/podman.sh images`)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}
exec podman --storage-driver "${LOOPGUARD_PODMAN_STORAGE_DRIVER:-vfs}" --runtime runc --cgroup-manager cgroupfs "$@"
