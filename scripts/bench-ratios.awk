# bench-ratios.awk: the summary `make bench` prints after the benchmarks:
# every figure that is a ratio against the same app without the profiler
# (metrics named *ratio* or */base*), one benchmark per line, with the CPU
# model `go test` printed for its package (the costs differ by CPU vendor:
# README, "What it costs").
/^cpu:/ { cpu = substr($0, 6) }
/^Benchmark/ {
	name = $1
	sub(/-[0-9]+$/, "", name)
	out = ""
	for (i = 3; i < NF; i += 2) {
		m = $(i + 1)
		if (m ~ /ratio|\/base/)
			out = out sprintf("  %s %s", $i, m)
	}
	if (out != "")
		printf "%-58s%s   [%s]\n", name, out, cpu
}
