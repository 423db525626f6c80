# rocprof-go's rocprofv3_avail_module: the Python module rocprofiler-sdk
# installs beside rocprofv3 (PREFIX/bin/rocprofv3_avail_module), which
# rocprofiler-compute imports to list each GPU's counters. It reads them
# through librocprofv3-list-avail.so's C ABI (ctypes), as rocprofiler-sdk's
# does; rocprof-go's library answers from `rocprof-go avail --format records`.
# See docs/rocprofiler-compute.md.
"""List the counters of each GPU agent through librocprofv3-list-avail.so."""
