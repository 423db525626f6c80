#!/usr/bin/env bash
# What a run of the test suite may leave on the machine outside the test's
# own temporary directories, which .ci/run lists before the suite and
# checks after it (CI starts on a clean machine, so anything new is left by
# a test, or by rocprof-go where it should not be):
#   - anything in /dev/shm (rocprof-go's run directories rocprof-go-run-*,
#     and whatever else an app or library leaves there) but ROCm's own:
#     the thunk's hsakmt_shared_mem and sem.hsakmt_semaphore (libhsakmt
#     creates them in every process that opens the KFD) and ROCm SMI's
#     per-device mutexes rocm_smi_card<N> and rocm_smi_renderD<N> (made by
#     librocm_smi64 in the apps of test/rocmlibs, as RCCL's): on any ROCm
#     machine they are shared by every process and never removed;
#   - rocprof-go's directories in the temporary directories
#     (TMPDIR, /tmp, /var/tmp: a run directory rocprof-go-run-*, a private
#     library copy rocprof-go-libs-*, the node-local cache rocprof-go-<uid>,
#     an install prefix rocprof-go-install.*) but the virtual GPU's per-user
#     directory rocprof-go-vgpu-<uid>, a cache of its KFD sysfs trees, of
#     which only half-written .tmp-* entries are left behind;
#   - in the library cache ($XDG_CACHE_HOME or ~/.cache, and
#     $XDG_RUNTIME_DIR, each /rocprof-go), anything but the unpacked
#     libraries' directories (named by 16 hex digits of their hash) and the
#     DuckDB engine's (tool-<16 hex digits>): a half-unpacked .unpack-* or a
#     set-aside .damaged-*.
#
#   scripts/check-leftovers.sh list           print them, one path a line
#   scripts/check-leftovers.sh check BEFORE   fail (exit 1) when something is
#                                             there now that the file BEFORE
#                                             (an earlier list) does not name,
#                                             saying what each one holds
set -euo pipefail

list() {
	shopt -s nullglob dotglob
	local d f
	for f in /dev/shm/*; do
		case ${f#/dev/shm/} in
		hsakmt_shared_mem | sem.hsakmt_semaphore | rocm_smi_card[0-9]* | rocm_smi_renderD[0-9]*) ;;
		*) echo "$f" ;;
		esac
	done
	for d in "${TMPDIR:-/tmp}" /tmp /var/tmp; do
		for f in "$d"/rocprof-go-*; do
			if [[ $(basename "$f") =~ ^rocprof-go-vgpu-[0-9]+$ ]]; then
				for g in "$f"/*; do
					[[ $(basename "$g") =~ ^topology-[0-9a-f]{16}$ ]] || echo "$g"
				done
			else
				echo "$f"
			fi
		done
	done
	for d in "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/rocprof-go" ${XDG_RUNTIME_DIR:+"$XDG_RUNTIME_DIR/rocprof-go"}; do
		for f in "$d"/*; do
			[[ $(basename "$f") =~ ^(tool-)?[0-9a-f]{16}$ ]] || echo "$f"
		done
	done
}

# describe says what a left entry holds and, for a run directory, which
# test made it: a test's app runs in (or names) the test's temporary
# directory, /tmp/TestName<digits>, which its spools' process header holds.
describe() {
	local p=$1
	ls -la "$p" 2>/dev/null | sed 's/^/    /' | head -20
	if [ -d "$p" ]; then
		[ -f "$p/owner" ] && echo "    owner (rocprof-go's pid): $(cat "$p/owner")"
		local tests
		tests=$(find "$p" -name '*.spool' -type f -exec grep -aoh '/tmp/Test[A-Za-z0-9_]*' {} + 2>/dev/null | sort -u | head -5 | tr '\n' ' ')
		[ -n "$tests" ] && echo "    its spools name the test directories: $tests"
	fi
	return 0
}

case "${1:-}" in
list)
	list | LC_ALL=C sort -u
	;;
check)
	before=${2:?usage: $0 check BEFORE}
	now=$(list | LC_ALL=C sort -u)
	left=$(LC_ALL=C comm -13 <(LC_ALL=C sort -u "$before") <(printf '%s\n' "$now" | sed '/^$/d'))
	if [ -z "$left" ]; then
		echo "check-leftovers: nothing left in /dev/shm, the temporary directories or the library cache"
		exit 0
	fi
	echo "check-leftovers: FAIL: the suite left these behind (a test must remove what it creates, t.Cleanup; delete them by hand before the next run):"
	while IFS= read -r p; do
		echo "  $p"
		describe "$p"
	done <<<"$left"
	exit 1
	;;
*)
	echo "usage: $0 list | check BEFORE" >&2
	exit 2
	;;
esac
