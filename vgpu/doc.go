// Package vgpu holds the tests of the virtual GPU, a plain-C replacement of
// ROCm 5.2.3's libhsakmt.so.1 (sources in vgpu/src, built by mk/vgpu.mk into
// build/vgpu/libhsakmt.so.1). The library itself contains no Go: only one Go
// runtime may live in a process, and the profiler's shim brings its own.
// The tests run the sample apps of testdata/apps and small raw-HSA drivers on
// it and check data movement, queue progress, timestamps and the
// perf-counter model described in docs/virtual-gpu.md.
package vgpu

// The counter registers' table, from AQLprofile's block tables and
// rocprofiler-sdk's counter definitions in ../shared (provenance in the
// script); make guards' check-generated fails when it is not as committed.
//go:generate sh -c "python3 src/gen_perfregs.py ../../shared/golden/aqlprofile/blocks.json ../../shared/data/counter_defs.yaml > src/perfregs_table.c.tmp && mv src/perfregs_table.c.tmp src/perfregs_table.c"
