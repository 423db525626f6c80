// Package hosts is the host-variance test set: rocprof-go and its virtual GPU
// on the machines its users and their CI run on, not only the developers'.
// Each case recreates one condition of such a host in a namespace or with a
// second local user — no CPU cache entries in sysfs (KVM guests, microVMs),
// a container's 64 MiB /dev/shm, no HOME, no TMPDIR, a non-root user, a
// read-only /sys, an unprivileged container — and runs a profiled app on the
// virtual GPU there, which must keep every record. The CPU-cache case runs on
// every ROCm runtime of the matrix, with the sample apps and rocminfo bare on
// the virtual GPU too. docs/hosts.md lists what the virtual GPU and the
// profiler need from a host and what happens where it is missing.
package hosts
