#!/usr/bin/env bash
# compare-outputs.sh BASE [HEAD]: are the outputs byte-identical before and
# after a change? (issue 35; `make compare-outputs BASE=<commit>`.)
#
# Builds the CLI at BASE and at HEAD (default HEAD: the committed tree, not
# the working tree's edits; each from `git archive` in a temporary
# directory), makes one fixed set of inputs, has both CLIs turn them into
# every output, and compares the files' sha256 sums, printing the files that
# differ or exist on one side only. Exit 0 when every file matches.
#
# The inputs, made once and given to both CLIs:
#   - testdata/spool's spools (BASE's copies);
#   - outputtest's synthetic spools (every domain), written by BASE's tree;
#   - spools recorded live from sample apps on the virtual GPU
#     (build/testdata; ROCPROF_GO_KEEP_SPOOLS), with the build's injected
#     libraries: a live run is not deterministic (pids, host timestamps), so
#     its spools are recorded once and both CLIs convert them (a CLI older
#     than the recorder's sealed chunks converts a copy in the format it
#     reads: see "sealed" below).
# The outputs, per CLI:
#   - `convert -f csv json pftrace otf2 rocpd parquet` of every input, under
#     several option sets (default; --stats; -M; -T with -A absolute and
#     --group-by-queue; --parquet-hive -o rank%rank%), with the command's
#     exit status and its stderr (the output directory's path replaced);
#   - `summary` (text, csv, json) and `convert -f csv json` of every ROCpd
#     database the default set wrote (the ROCpd reading path);
#   - jobgen's synthetic four-rank job (hive Parquet, ROCpd), written by
#     each tree's own writers.
# Normalised, because it must differ between two runs of the same CLI: the
# OTF2 anchor's trace identifier (a random number the OTF2 library draws
# for every archive), zeroed. Nothing else: two runs of one CLI over this
# corpus are byte-identical otherwise (`scripts/compare-outputs.sh HEAD
# HEAD` checks that).
#
# Environment: ROCPROF_GO_BUILD (default <repo>/build) holds the injected
# libraries (lib/, vgpu/) and the sample apps (testdata/) of `make build
# testapps`; COMPARE_KEEP=1 keeps the work directory.
set -euo pipefail

base=${1:?usage: scripts/compare-outputs.sh BASE [HEAD]}
head=${2:-HEAD}
repo=$(git rev-parse --show-toplevel)
build=${ROCPROF_GO_BUILD:-$repo/build}
go=${GO:-go}
work=$(mktemp -d "${TMPDIR:-/tmp}/rocprof-go-compare-XXXXXX")
if [ "${COMPARE_KEEP:-}" = 1 ]; then
	echo "compare-outputs: work directory $work (kept)"
else
	trap 'rm -rf "$work"' EXIT
fi
say() { echo "compare-outputs: $*" >&2; }

# The two trees and their CLIs. The injected libraries are not built from
# the trees: both CLIs take the build's (ROCPROF_GO_LIBDIR), so what is
# compared is the Go side, which turns spools into outputs.
for side in base head; do
	rev=$base
	[ $side = head ] && rev=$head
	commit=$(git -C "$repo" rev-parse --verify "$rev^{commit}")
	echo "$commit" >"$work/$side.commit"
	mkdir -p "$work/src-$side" "$work/$side"
	git -C "$repo" archive "$commit" | tar -x -C "$work/src-$side"
	say "building the CLI at $side ($rev = ${commit:0:12})"
	(cd "$work/src-$side" && $go build -trimpath -o "$work/$side/rocprof-go" ./cmd/rocprof-go)
done
libs=$work/lib
mkdir -p "$libs"
chmod 700 "$libs"
for f in lib/librocprof-go-preload.so lib/librocprof-go-shim.so lib/libroctx64.so vgpu/librocprof-go-vgpu.so; do
	[ -e "$build/$f" ] || { say "$build/$f is missing: run make build testapps"; exit 2; }
	cp -L "$build/$f" "$libs/"
done
export ROCPROF_GO_LIBDIR=$libs

# The synthetic corpus, written by each tree (its jobgen outputs are
# compared; BASE's spools are the input).
for side in base head; do
	cp "$repo/scripts/compare-outputs/corpus_test.go.in" "$work/src-$side/internal/output/outputtest/zz_compare_corpus_test.go"
	(cd "$work/src-$side" && COMPARE_CORPUS="$work/gen-$side" $go test -count=1 -run '^TestCompareCorpus$' ./internal/output/outputtest/ >/dev/null)
done
inputs=$work/inputs
mkdir -p "$inputs"
cp -r "$work/gen-base/spools/synthetic" "$inputs/synthetic"
for s in "$work"/src-base/testdata/spool/*.spool; do
	n=$(basename "$s" .spool)
	mkdir -p "$inputs/testdata-$n"
	cp "$s" "$inputs/testdata-$n/rpg-$n.spool" # the name convert looks for
done

# Live spools: sample apps on the virtual GPU, recorded once (HEAD's CLI).
live() { # name arch app [options...]
	local name=$1 arch=$2 app=$3
	shift 3
	[ -x "$build/testdata/$app" ] || { say "$build/testdata/$app is missing: run make testapps"; exit 2; }
	ROCPROF_GO_KEEP_SPOOLS="$work/live-$name" "$work/head/rocprof-go" "$@" --virtual-gpu "$arch" \
		-d "$work/live-out-$name" -f csv -- "$build/testdata/$app" >"$work/live-$name.log" 2>&1 || true
	local p
	for p in "$work/live-$name"/pass_*; do
		[ -d "$p" ] && cp -r "$p" "$inputs/live-$name-$(basename "$p")"
	done
	return 0
}
live docapp gfx90a docapp --sys-trace --kernel-trace
live multistream gfx90a multistream --sys-trace --kernel-trace
live scratch gfx90a scratch_kernels --kernel-trace --scratch-memory-trace --memory-copy-trace
live tiny gfx908 tiny_kernels --kernel-trace --hip-trace
live pmc gfx90a docapp --kernel-trace --pmc SQ_WAVES GRBM_COUNT
n_inputs=$(find "$inputs" -mindepth 1 -maxdepth 1 -type d | wc -l)
say "$n_inputs inputs: $(cd "$inputs" && ls | tr '\n' ' ')"

# The live spools are in the format of the build's recorder. Since it seals
# the chunks it leaves for good (spool.h: RPG_CHUNK_SEALED "SEAL" instead of
# RPG_CHUNK_MAGIC "CHNK", the header flag RPG_HEADER_SEALS and its words
# stop, stop_seen and chunk_limit at bytes 120-135), a CLI older than that
# (no ChunkSealed in its internal/tracing) takes a sealed chunk for one that
# read back empty: it leaves out the chunk's records and fails. Such a side
# converts a copy of the live spools as the older recorder wrote them
# (sealed chunks given the chunk magic again, the flag and the words
# cleared), at the same path, so that both sides read the same records.
predates_seals() { ! grep -rqs --include='*.go' 'ChunkSealed' "$work/src-$1/internal/tracing"; }
unseal() { # spool...: rewrites each in place, prints how many chunks were sealed
	python3 - "$@" <<'PY'
import struct, sys
CHUNK, SPOOL, CHNK, SEAL, SEALS = 64 * 1024, 0x4c4f4f5053475052, 0x4b4e4843, 0x4c414553, 4
n = 0
for path in sys.argv[1:]:
    data = bytearray(open(path, 'rb').read())
    if len(data) < CHUNK or struct.unpack_from('<Q', data, 0)[0] != SPOOL:
        sys.exit("compare-outputs: %s: not a spool" % path)
    flags = struct.unpack_from('<I', data, 108)[0]
    struct.pack_into('<I', data, 108, flags & ~SEALS)
    data[120:136] = bytes(16)
    for c in range(1, len(data) // CHUNK):
        o = c * CHUNK
        if struct.unpack_from('<IxxxxQ', data, o) == (SEAL, c):
            struct.pack_into('<I', data, o, CHNK)
            n += 1
    open(path, 'wb').write(data)
print(n)
PY
}

# Every output of every input, by each CLI.
optsets=(
	"default|"
	"stats|--stats"
	"mangled|-M"
	"truncated|-T -A absolute --group-by-queue"
	"hive|--parquet-hive -o rank%rank%"
)
run() { # side dir cmd... : runs the CLI in out-<side> (paths below it are
	# given relative: outputs that name their inputs name the same), keeping
	# its exit status, stdout and stderr
	local side=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	local rc=0
	(cd "$work/out-$side" && "$work/$side/rocprof-go" "$@" >"$dir.stdout" 2>"$dir.stderr") || rc=$?
	echo "$rc" >"$dir.status"
	sed -i "s#$work/out-$side#OUT#g; s#$work#WORK#g" "$dir.stdout" "$dir.stderr"
}
for side in base head; do
	say "writing the outputs with $side's CLI"
	out=$work/out-$side
	if predates_seals $side; then
		mv "$inputs" "$work/inputs-sealed"
		cp -r "$work/inputs-sealed" "$inputs"
		mapfile -d '' spools < <(find "$inputs" -path "$inputs/live-*" -name '*.spool' -print0)
		sealed=0
		[ ${#spools[@]} -eq 0 ] || sealed=$(unseal "${spools[@]}")
		say "$side's CLI predates sealed spool chunks: it converts the live spools with their $sealed sealed chunks unsealed"
	fi
	for in in "$inputs"/*; do
		name=$(basename "$in")
		for o in "${optsets[@]}"; do
			tag=${o%%|*}
			# shellcheck disable=SC2206 # the option set is words
			opts=(${o#*|})
			d=$out/convert/$name/$tag
			run $side "$d" convert -i "$in" -f csv json pftrace otf2 rocpd parquet -d "$d" "${opts[@]}"
		done
		for db in "$out/convert/$name/default"/*.db; do
			[ -e "$db" ] || continue
			b=$(basename "$db" .db)
			rel=convert/$name/default/$b.db
			for f in text csv json; do
				run $side "$out/summary/$name/$b-$f" summary -i "$rel" --format "$f" -o "summary/$name/$b-$f/summary.$f"
			done
			run $side "$out/fromdb/$name/$b" convert -i "$rel" -f csv json -d "fromdb/$name/$b"
		done
	done
	cp -r "$work/gen-$side/jobgen" "$out/jobgen"
	if [ -d "$work/inputs-sealed" ]; then
		rm -rf "$inputs"
		mv "$work/inputs-sealed" "$inputs"
	fi
done

# Normalisation: the OTF2 anchor's random trace identifier (otf2-print -I
# shows it; stored little-endian in the anchor file).
for side in base head; do
	find "$work/out-$side" -name '*.otf2' -type f -print0 | while IFS= read -r -d '' a; do
		id=$(otf2-print -I "$a" 2>/dev/null | awk '/^Trace identifier/ {print $3}')
		[ -n "$id" ] || continue
		python3 - "$a" "$id" <<'EOF'
import sys
path, ident = sys.argv[1], int(sys.argv[2], 16)
data = open(path, 'rb').read()
le = ident.to_bytes(8, 'little')
if data.count(le) != 1:
    sys.exit("compare-outputs: %s: trace identifier %x found %d times" % (path, ident, data.count(le)))
open(path, 'wb').write(data.replace(le, bytes(8)))
EOF
	done
done

sums() { (cd "$work/out-$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/$1.sums"; }
sums base
sums head
total=$(cat "$work/base.sums" "$work/head.sums" | awk '{print $2}' | sort -u | wc -l)
same=$(comm -12 <(sort "$work/base.sums") <(sort "$work/head.sums") | wc -l)
echo "compare-outputs: $(cut -c1-12 "$work/base.commit") (BASE) vs $(cut -c1-12 "$work/head.commit") (HEAD): $n_inputs inputs, $total files, $same identical"
if [ "$same" -ne "$total" ]; then
	echo "compare-outputs: files that differ or exist on one side only:"
	join -j 2 -a 1 -a 2 -e MISSING -o 0,1.1,2.1 <(sort -k2 "$work/base.sums") <(sort -k2 "$work/head.sums") |
		awk '$2 != $3 { if ($2 == "MISSING") print "  only in HEAD: " $1; else if ($3 == "MISSING") print "  only in BASE: " $1; else print "  differs:      " $1 }'
	exit 1
fi
