#!/usr/bin/env bash
# Runs the stock Envoy Gateway controller outside a cluster as its Deployment's container would see things, for
# test/integration/gateways.test.ts (through test/support/envoy-gateway.ts):
#   - its Kubernetes provider reads the xDS server's certificates from /certs (a fixed path: the chart mounts the
#     certgen Secret there), so it runs chrooted into a tmpfs root that bind-mounts every top-level directory of /
#     plus the test's own certificates at /certs: no /certs is made on the host;
#   - it listens on fixed ports on every interface (health probes :8081, xDS :18000, metrics :19001, …), so it runs in
#     a network namespace of its own: nothing it serves is reachable from outside, and it cannot collide with other
#     test servers on this machine. It reaches the test apiserver through a relay: a unix socket (served by the test
#     process) forwarded to 127.0.0.1:RELAY_PORT inside the namespace by a Node one-liner.
# Needs root (CI and these machines run as root; for anyone else it asks for an unprivileged user namespace mapping
# them to root, untested here), util-linux's unshare and iproute2. Run with `detached: true` and stop it by its
# process group: the relay shares it.
#   envoy-gateway-jail.sh ROOT CERTS SOCKET RELAY_PORT -- COMMAND...
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # ip, mount, chroot

if [ -z "${LG_EG_JAILED:-}" ]; then
  user=()
  [ "$(id -u)" = 0 ] || user=(--user --map-root-user)
  LG_EG_JAILED=1 exec unshare "${user[@]}" --mount --net --propagation private "$0" "$@"
fi

root=$1 certs=$2 socket=$3 port=$4
shift 5

ip link set lo up
mount -t tmpfs loopguard-envoy-gateway "$root"
for entry in /*; do
  name=${entry#/}
  if [ -L "$entry" ]; then
    ln -s "$(readlink "$entry")" "$root/$name"
  elif [ -d "$entry" ]; then
    mkdir "$root/$name" && mount --rbind "$entry" "$root/$name"
  fi
done
mkdir "$root/certs" && mount --bind "$certs" "$root/certs"

# The relay says when it listens (EG gives up at once on an apiserver it cannot reach); its stdout is closed after.
# Both die with the test process that started them (--pdeathsig), even when it is killed: nothing outlives a suite.
exec 3< <(setpriv --pdeathsig KILL "${NODE:-node}" -e '
  const net = require("node:net");
  const [socket, port] = process.argv.slice(1);
  net.createServer((c) => { const u = net.connect(socket); c.pipe(u).pipe(c); u.on("error", () => c.destroy()); c.on("error", () => u.destroy()); })
    .listen(Number(port), "127.0.0.1", () => process.stdout.write("listening\n"));
' "$socket" "$port")
read -r _ <&3
exec 3<&-

exec setpriv --pdeathsig KILL chroot "$root" "$@"
