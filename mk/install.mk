# rocprofiler-sdk's list-avail pieces and an installed layout a client of
# rocprofv3 (rocprofiler-compute) can be pointed at (docs/rocprofiler-compute.md):
#
#   make install PREFIX=/opt/rocprof-go
#     PREFIX/bin/rocprof-go                                   the CLI
#     PREFIX/bin/rocprofv3 -> rocprof-go
#     PREFIX/bin/rocprofv3_avail_module/{__init__,avail}.py   where rocprofiler-sdk puts it
#     PREFIX/lib/rocprofiler-sdk/librocprofv3-list-avail.so   where rocprofiler-compute loads it
#     PREFIX/lib/librocprofv3-list-avail.so -> rocprofiler-sdk/librocprofv3-list-avail.so
#     PREFIX/lib/python3/site-packages/rocprofv3_avail_module/ (for PYTHONPATH)
#
# The library is plain C (libc only) and optional: the CLI never loads it.
LIST_AVAIL_DIR     := $(BUILD)/list-avail
LIST_AVAIL_LIB     := $(LIST_AVAIL_DIR)/librocprofv3-list-avail.so
LIST_AVAIL_CFLAGS  := -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror -pthread
LIST_AVAIL_LDFLAGS := -shared -Wl,-soname,librocprofv3-list-avail.so -Wl,-z,defs -pthread -ldl
LIST_AVAIL_PY      := $(sort $(wildcard listavail/rocprofv3_avail_module/*.py))
PREFIX             ?= /usr/local

$(LIST_AVAIL_LIB): listavail/list_avail.c mk/install.mk
	@mkdir -p $(LIST_AVAIL_DIR)
	$(CC) $(LIST_AVAIL_CFLAGS) -o $@.tmp listavail/list_avail.c $(LIST_AVAIL_LDFLAGS)
	mv -f $@.tmp $@

.PHONY: list-avail install
list-avail: $(LIST_AVAIL_LIB)

install: $(LIST_AVAIL_LIB)
	@test -x $(BUILD)/rocprof-go || { echo "make install: build the CLI first (make build)"; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/bin/rocprofv3_avail_module $(DESTDIR)$(PREFIX)/lib/rocprofiler-sdk \
	  $(DESTDIR)$(PREFIX)/lib/python3/site-packages/rocprofv3_avail_module
	install -m 0755 $(BUILD)/rocprof-go $(DESTDIR)$(PREFIX)/bin/rocprof-go
	@# The DuckDB engine goes beside the CLI, where rocprof-go looks for it.
	if [ -x $(BUILD)/rocprof-go-duckdb ]; then install -m 0755 $(BUILD)/rocprof-go-duckdb $(DESTDIR)$(PREFIX)/bin/rocprof-go-duckdb; fi
	ln -sfn rocprof-go $(DESTDIR)$(PREFIX)/bin/rocprofv3
	install -m 0644 $(LIST_AVAIL_PY) $(DESTDIR)$(PREFIX)/bin/rocprofv3_avail_module/
	install -m 0644 $(LIST_AVAIL_PY) $(DESTDIR)$(PREFIX)/lib/python3/site-packages/rocprofv3_avail_module/
	install -m 0755 $(LIST_AVAIL_LIB) $(DESTDIR)$(PREFIX)/lib/rocprofiler-sdk/librocprofv3-list-avail.so
	ln -sfn rocprofiler-sdk/librocprofv3-list-avail.so $(DESTDIR)$(PREFIX)/lib/librocprofv3-list-avail.so
