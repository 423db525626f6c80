// Package listavail tests what rocprof-go installs for rocprofv3's clients
// that list counters through rocprofiler-sdk's rocprofv3_avail_module and
// librocprofv3-list-avail.so (rocprofiler-compute): `make install` puts
// them where rocprofiler-compute looks, and they list what rocprof-go -L
// lists (docs/rocprofiler-compute.md).
package listavail
