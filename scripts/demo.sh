#!/usr/bin/env bash
# make demo: profile a sample multi-stream HIP app the way the README's first
# example does, on the virtual GPU when this machine has no AMD GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=build/rocprof-go
app=build/testdata/multistream
out=build/demo
for f in "$cli" "$app"; do
  if [ ! -x "$f" ]; then
    echo "demo: $f is not built: run \`make demo\` (it builds the CLI and this app first)" >&2
    exit 1
  fi
done
rm -rf "$out"
vgpu=()
if [ ! -e /dev/kfd ]; then
  echo "demo: no /dev/kfd here, so the app runs on rocprof-go's virtual GPU (timings and counters are emulated)"
  vgpu=(--virtual-gpu)
fi
rc=0
set -x
"$cli" "${vgpu[@]}" --hip-trace --kernel-trace --memory-copy-trace --stats -f csv rocpd \
  -i testdata/demo/input.txt -d "$out" -o demo -- "$app" 2 4 || rc=$?
{ set +x; } 2>/dev/null
if [ "$rc" != 0 ]; then
  # rocprof-go exits with the app's status when the app failed (128+N for
  # signal N), after its own report above; its own errors are printed there.
  echo "demo: rocprof-go exited with status $rc (see its messages above; what it wrote is under $out)" >&2
  exit "$rc"
fi
echo
echo "demo: files written under $out:"
find "$out" -type f | sort | sed 's/^/  /'
for f in "$out"/pmc_1/demo_kernel_stats.csv "$out"/pmc_1/demo_counter_collection.csv; do
  if [ -f "$f" ]; then
    echo; echo "== $f"; head -n 6 "$f"
  fi
done
echo; echo "== run.json"; head -n 30 "$out/run.json"
