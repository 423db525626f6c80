#!/bin/sh
# without-cpu-caches.sh CMD [ARGS...]: run CMD as on a host whose sysfs has no
# CPU cache entries (many KVM guests, microVMs and containers): every
# /sys/devices/system/cpu/cpuN/cache is emptied in a private mount namespace,
# so nothing changes for the rest of the machine. CI runs `make test` this
# way (.ci/run), so a developer's host that has the entries cannot hide a
# dependency on them (docs/hosts.md). Needs root (a mount namespace).
set -eu
if [ "$#" -eq 0 ]; then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi
if [ "${RPG_WITHOUT_CPU_CACHES_INNER:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "$0: needs root for a private mount namespace (sudo $0 $*)" >&2; exit 1; }
  RPG_WITHOUT_CPU_CACHES_INNER=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
unset RPG_WITHOUT_CPU_CACHES_INNER
for d in /sys/devices/system/cpu/cpu[0-9]*/cache; do
  [ -d "$d" ] || continue
  mount -t tmpfs -o size=4k,mode=0555 rpg-no-cpu-cache "$d"
done
n=$(find /sys/devices/system/cpu/ -path '*/cache/index*' -maxdepth 4 2>/dev/null | wc -l)
[ "$n" = 0 ] || { echo "$0: $n CPU cache entries still visible" >&2; exit 1; }
echo "without-cpu-caches: /sys/devices/system/cpu/cpu*/cache hidden for: $*" >&2
exec "$@"
