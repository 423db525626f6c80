# bench-ratios.awk: the summary `make bench` prints after the benchmarks:
# the host line it starts with (internal/cmd/hostinfo: CPU, hypervisor or
# bare metal, clock source, the cost of the recorder's clock reads), then
# every figure that is a ratio against the same app without the profiler
# (metrics named *ratio* or */base*), one benchmark per line, with the CPU
# model `go test` printed for its package and the clock reads the benchmark
# measured beside its figures (rdtsc-ns, clock_gettime-ns; testsys.ReportHost).
# The costs differ by CPU vendor: docs/performance.md.
/^host: / && !host { host = 1; print }
/^cpu:/ { cpu = substr($0, 6) }
/^Benchmark/ {
	name = $1
	sub(/-[0-9]+$/, "", name)
	out = ""
	rdtsc = gettime = ""
	for (i = 3; i < NF; i += 2) {
		m = $(i + 1)
		if (m ~ /ratio|\/base/)
			out = out sprintf("  %s %s", $i, m)
		else if (m == "rdtsc-ns")
			rdtsc = sprintf(", rdtsc %s ns", $i)
		else if (m == "clock_gettime-ns")
			gettime = sprintf(", clock_gettime %s ns", $i)
	}
	if (out != "")
		printf "%-58s%s   [%s%s%s]\n", name, out, cpu, rdtsc, gettime
}
