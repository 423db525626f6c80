// Package vgpu holds the tests of the virtual GPU, a plain-C replacement of
// ROCm 5.2.3's libhsakmt.so.1 (sources in vgpu/src, built by mk/vgpu.mk into
// build/vgpu/libhsakmt.so.1). The library itself contains no Go: only one Go
// runtime may live in a process, and the profiler's shim brings its own.
// The tests run the sample apps of testdata/apps and small raw-HSA drivers on
// it and check data movement, queue progress, timestamps and the
// perf-counter model described in docs/virtual-gpu.md.
package vgpu
