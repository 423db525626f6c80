//go:build cgo

package otf2

// The OTF2 writer calls the OTF2 library through function pointers that
// rpg_otf2_load resolves with dlopen and dlsym the first time -f otf2
// writes, so the binary neither links OTF2 nor needs its headers
// (otf2_api.h declares what is called). Events cross into C in batches;
// definitions, written once at the end, one call each.

/*
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "otf2_api.h"

// rpg_api holds the library's functions once rpg_otf2_load succeeded; it
// is never unloaded.
struct rpg_otf2_api {
#define RPG_OTF2_FIELD(ret, name, params) ret(*name) params;
	RPG_OTF2_FUNCTIONS(RPG_OTF2_FIELD)
#undef RPG_OTF2_FIELD
};
static struct rpg_otf2_api rpg_api;

// rpg_otf2_load opens lib and resolves every function the writer calls.
// It returns 0 on success, 1 when dlopen fails (err holds dlerror's
// message), 2 when a function is missing (err names it). The Go side
// serialises calls.
static int rpg_otf2_load(const char *lib, char *err, size_t errlen) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s", dlerror());
		return 1;
	}
	struct rpg_otf2_api api;
#define RPG_OTF2_RESOLVE(ret, name, params)                                     \
	*(void **)&api.name = dlsym(h, #name);                                      \
	if (!api.name) {                                                            \
		snprintf(err, errlen, "%s has no %s: it is not OTF2 3.x", lib, #name); \
		dlclose(h);                                                             \
		return 2;                                                               \
	}
	RPG_OTF2_FUNCTIONS(RPG_OTF2_RESOLVE)
#undef RPG_OTF2_RESOLVE
	rpg_api = api;
	return 0;
}

typedef struct {
	uint64_t loc;
	uint64_t time;
	uint32_t region;
	uint32_t leave;
	uint32_t category; // string ref of the event's category (attribute 0)
	uint32_t pad;
} rpg_otf2_event;

typedef struct {
	OTF2_Archive *archive;
	OTF2_EvtWriter **writers;
	size_t nwriters;
	OTF2_GlobalDefWriter *defs;
	OTF2_AttributeList *attrs; // one event's attributes, filled per event
} rpg_otf2;

static OTF2_FlushType rpg_pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
                                    void *caller, bool final) {
	return OTF2_FLUSH;
}

static OTF2_FlushCallbacks rpg_flush_callbacks = {
	.otf2_pre_flush = rpg_pre_flush,
	// No post-flush callback: with one, OTF2 records every flush as a
	// BUFFER_FLUSH event in the location's trace (with the memory
	// callbacks below a busy location flushes every MiB), which would
	// change the archive's content.
	.otf2_post_flush = NULL,
};

// Memory: OTF2 keeps a writer's events in chunks until the writer is
// closed unless its memory callbacks refuse a chunk; then it flushes the
// chunks it holds to the file, frees them and asks again. Each buffer (a
// location's event writer, the definitions) gets RPG_OTF2_CHUNKS chunks at
// most, so the writer's memory does not grow with the trace (issue 43:
// 25 bytes per event before, all of a location's events held until its
// last).
#define RPG_OTF2_CHUNKS 4

typedef struct {
	void *chunk[RPG_OTF2_CHUNKS];
	int n;
} rpg_otf2_chunks;

static void *rpg_allocate(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per, uint64_t size) {
	rpg_otf2_chunks *c = *per;
	if (!c) {
		c = calloc(1, sizeof *c);
		if (!c) return NULL;
		*per = c;
	}
	if (c->n == RPG_OTF2_CHUNKS) return NULL; // flush first
	void *m = malloc(size);
	if (m) c->chunk[c->n++] = m;
	return m;
}

static void rpg_free_all(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per, bool final) {
	rpg_otf2_chunks *c = *per;
	if (!c) return;
	for (int i = 0; i < c->n; i++) free(c->chunk[i]);
	c->n = 0;
	if (final) {
		free(c);
		*per = NULL;
	}
}

static OTF2_MemoryCallbacks rpg_memory_callbacks = {
	.otf2_allocate = rpg_allocate,
	.otf2_free_all = rpg_free_all,
};

// Chunk sizes: OTF2's minimum (OTF2_CHUNK_SIZE_MIN, 256 KiB) for events
// and definitions. The library allocates and clears one chunk for every
// location's event writer and one for its (empty) local definitions, so
// their sizes are a per-location cost: with its defaults (1 MiB and 4 MiB)
// an archive of 130,000 host threads cleared 650 GB and took many minutes.
// A busy location just uses more chunks.
#define RPG_OTF2_CHUNK (256 * 1024)

static int rpg_otf2_open(const char *dir, const char *name, rpg_otf2 **out) {
	rpg_otf2 *t = calloc(1, sizeof *t);
	if (!t) return -1;
	t->archive = rpg_api.OTF2_Archive_Open(dir, name, OTF2_FILEMODE_WRITE, RPG_OTF2_CHUNK, RPG_OTF2_CHUNK,
	                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!t->archive) { free(t); return -2; }
	t->attrs = rpg_api.OTF2_AttributeList_New();
	if (!t->attrs) { rpg_api.OTF2_Archive_Close(t->archive); free(t); return -4; }
	if (rpg_api.OTF2_Archive_SetFlushCallbacks(t->archive, &rpg_flush_callbacks, NULL) != OTF2_SUCCESS ||
	    rpg_api.OTF2_Archive_SetMemoryCallbacks(t->archive, &rpg_memory_callbacks, NULL) != OTF2_SUCCESS ||
	    rpg_api.OTF2_Archive_SetSerialCollectiveCallbacks(t->archive) != OTF2_SUCCESS ||
	    rpg_api.OTF2_Archive_OpenEvtFiles(t->archive) != OTF2_SUCCESS) {
		rpg_api.OTF2_Archive_Close(t->archive);
		rpg_api.OTF2_AttributeList_Delete(t->attrs);
		free(t);
		return -3;
	}
	*out = t;
	return 0;
}

static OTF2_EvtWriter *rpg_writer(rpg_otf2 *t, uint64_t loc) {
	if (loc >= t->nwriters) {
		size_t n = t->nwriters ? t->nwriters : 16;
		while (n <= loc) n *= 2;
		OTF2_EvtWriter **w = realloc(t->writers, n * sizeof *w);
		if (!w) return NULL;
		for (size_t i = t->nwriters; i < n; i++) w[i] = NULL;
		t->writers = w;
		t->nwriters = n;
	}
	if (!t->writers[loc]) t->writers[loc] = rpg_api.OTF2_Archive_GetEvtWriter(t->archive, loc);
	return t->writers[loc];
}

static int rpg_otf2_events(rpg_otf2 *t, const rpg_otf2_event *ev, int n) {
	for (int i = 0; i < n; i++) {
		OTF2_EvtWriter *w = rpg_writer(t, ev[i].loc);
		if (!w) return -1;
		// Every event carries its category as attribute 0, as rocprofv3's
		// do (readers count regions per category through it).
		rpg_api.OTF2_AttributeList_RemoveAllAttributes(t->attrs);
		if (rpg_api.OTF2_AttributeList_AddStringRef(t->attrs, 0, ev[i].category) != OTF2_SUCCESS) return -2;
		OTF2_ErrorCode rc = ev[i].leave ? rpg_api.OTF2_EvtWriter_Leave(w, t->attrs, ev[i].time, ev[i].region)
		                                : rpg_api.OTF2_EvtWriter_Enter(w, t->attrs, ev[i].time, ev[i].region);
		if (rc != OTF2_SUCCESS) return (int)rc;
	}
	return 0;
}

// rpg_otf2_close_writer closes one location's event writer, flushing its
// buffer to its file, once the location has no more events: OTF2 keeps its
// open writers in a list it searches on every open and close, and each
// holds a chunk of memory, so keeping every location's writer open until
// the end cost time quadratic in the locations (and a chunk each).
static int rpg_otf2_close_writer(rpg_otf2 *t, uint64_t loc) {
	if (loc >= t->nwriters || !t->writers[loc]) return 0;
	OTF2_ErrorCode rc = rpg_api.OTF2_Archive_CloseEvtWriter(t->archive, t->writers[loc]);
	t->writers[loc] = NULL;
	return rc == OTF2_SUCCESS ? 0 : -1;
}

// rpg_otf2_begin_defs closes the event files and opens the definitions.
// Closing an event writer flushes its buffer to its file: its return code
// is the write's.
static int rpg_otf2_begin_defs(rpg_otf2 *t, uint64_t nlocs, uint64_t begin, uint64_t length) {
	int failed = 0;
	for (size_t i = 0; i < t->nwriters; i++)
		if (t->writers[i] && rpg_api.OTF2_Archive_CloseEvtWriter(t->archive, t->writers[i]) != OTF2_SUCCESS)
			failed = 1;
	free(t->writers);
	t->writers = NULL;
	t->nwriters = 0;
	if (failed) return -5;
	if (rpg_api.OTF2_Archive_CloseEvtFiles(t->archive) != OTF2_SUCCESS) return -1;
	// Every location needs a (here empty) local definitions file.
	if (rpg_api.OTF2_Archive_OpenDefFiles(t->archive) != OTF2_SUCCESS) return -2;
	for (uint64_t l = 0; l < nlocs; l++) {
		OTF2_DefWriter *d = rpg_api.OTF2_Archive_GetDefWriter(t->archive, l);
		if (!d || rpg_api.OTF2_Archive_CloseDefWriter(t->archive, d) != OTF2_SUCCESS) return -6;
	}
	if (rpg_api.OTF2_Archive_CloseDefFiles(t->archive) != OTF2_SUCCESS) return -3;
	t->defs = rpg_api.OTF2_Archive_GetGlobalDefWriter(t->archive);
	if (!t->defs) return -4;
	return rpg_api.OTF2_GlobalDefWriter_WriteClockProperties(t->defs, 1000000000, begin, length, OTF2_UNDEFINED_TIMESTAMP);
}

static int rpg_otf2_string(rpg_otf2 *t, uint32_t id, const char *s) {
	return rpg_api.OTF2_GlobalDefWriter_WriteString(t->defs, id, s);
}

static int rpg_otf2_region(rpg_otf2 *t, uint32_t id, uint32_t name, uint32_t canonical, uint32_t file) {
	return rpg_api.OTF2_GlobalDefWriter_WriteRegion(t->defs, id, name, canonical, canonical,
	                                                OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
	                                                OTF2_REGION_FLAG_NONE, file, 0, 0);
}

static int rpg_otf2_attribute(rpg_otf2 *t, uint32_t name, uint32_t description) {
	return rpg_api.OTF2_GlobalDefWriter_WriteAttribute(t->defs, 0, name, description, OTF2_TYPE_STRING);
}

static int rpg_otf2_node(rpg_otf2 *t, uint32_t name, uint32_t cls) {
	return rpg_api.OTF2_GlobalDefWriter_WriteSystemTreeNode(t->defs, 0, name, cls,
	                                                        OTF2_UNDEFINED_SYSTEM_TREE_NODE);
}

static int rpg_otf2_group(rpg_otf2 *t, uint32_t id, uint32_t name) {
	return rpg_api.OTF2_GlobalDefWriter_WriteLocationGroup(t->defs, id, name, OTF2_LOCATION_GROUP_TYPE_PROCESS,
	                                                       0, OTF2_UNDEFINED_LOCATION_GROUP);
}

static int rpg_otf2_location(rpg_otf2 *t, uint64_t id, uint32_t name, uint64_t events, uint32_t group,
                             int gpu) {
	return rpg_api.OTF2_GlobalDefWriter_WriteLocation(
		t->defs, id, name, gpu ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM : OTF2_LOCATION_TYPE_CPU_THREAD, events,
		group);
}

// rpg_otf2_close closes the archive (writing the global definitions and
// the anchor file); any failed close is an error.
static int rpg_otf2_close(rpg_otf2 *t) {
	int rc = 0;
	if (t->writers) {
		for (size_t i = 0; i < t->nwriters; i++)
			if (t->writers[i] && rpg_api.OTF2_Archive_CloseEvtWriter(t->archive, t->writers[i]) != OTF2_SUCCESS)
				rc = -2;
		free(t->writers);
		if (rpg_api.OTF2_Archive_CloseEvtFiles(t->archive) != OTF2_SUCCESS) rc = -3;
	}
	if (rpg_api.OTF2_Archive_Close(t->archive) != OTF2_SUCCESS) rc = -1;
	rpg_api.OTF2_AttributeList_Delete(t->attrs);
	free(t);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// otf2Loaded is the library rpg_api was resolved from; "" until then. A
// failed load is tried again on the next write.
var otf2Loaded struct {
	sync.Mutex
	soname string
}

// loadOTF2 opens the OTF2 library, unless it is open already: the first of
// otf2Sonames that dlopen finds and that has every function the writer
// calls. Its error is an *OTF2LibraryError.
func loadOTF2() error {
	otf2Loaded.Lock()
	defer otf2Loaded.Unlock()
	if otf2Loaded.soname != "" {
		return nil
	}
	e := &OTF2LibraryError{Tried: otf2Sonames}
	var msg [512]C.char
	for _, name := range otf2Sonames {
		cname := C.CString(name)
		rc := C.rpg_otf2_load(cname, &msg[0], C.size_t(len(msg)))
		C.free(unsafe.Pointer(cname))
		if rc == 0 {
			otf2Loaded.soname = name
			return nil
		}
		// Not there at all is the usual case; anything else (another
		// architecture, a missing dependency or function) is worth saying.
		if reason := C.GoString(&msg[0]); !strings.HasPrefix(reason, name+": cannot open shared object file") {
			e.Failures = append(e.Failures, reason)
		}
	}
	e.OSRelease = readOSRelease()
	return e
}

// otf2Archive is the C library's archive.
type otf2Archive struct{ t *C.rpg_otf2 }

func openOTF2(dir, name string) (otf2Archive, error) {
	if err := loadOTF2(); err != nil {
		return otf2Archive{}, err
	}
	cdir, cname := C.CString(dir), C.CString(name)
	defer C.free(unsafe.Pointer(cdir))
	defer C.free(unsafe.Pointer(cname))
	var t *C.rpg_otf2
	if rc := C.rpg_otf2_open(cdir, cname, &t); rc != 0 {
		return otf2Archive{}, fmt.Errorf("otf2: cannot create archive %s/%s (step %d)", dir, name, int(rc))
	}
	return otf2Archive{t}, nil
}

func (a otf2Archive) events(ev []otf2Event) error {
	if rc := C.rpg_otf2_events(a.t, (*C.rpg_otf2_event)(unsafe.Pointer(&ev[0])), C.int(len(ev))); rc != 0 {
		return fmt.Errorf("otf2: writing events failed (code %d; the OTF2 library printed why)", int(rc))
	}
	return nil
}

// closeLocation closes a location's event writer (after its last event).
func (a otf2Archive) closeLocation(loc uint64) error {
	if rc := C.rpg_otf2_close_writer(a.t, C.uint64_t(loc)); rc != 0 {
		return fmt.Errorf("otf2: writing events failed (closing location %d; the OTF2 library printed why)", loc)
	}
	return nil
}

func (a otf2Archive) definitions(t *otf2Trace) error {
	if rc := C.rpg_otf2_begin_defs(a.t, C.uint64_t(len(t.locDefs)), C.uint64_t(t.begin), C.uint64_t(t.end-t.begin)); rc != 0 {
		return fmt.Errorf("otf2: writing definitions failed (code %d; the OTF2 library printed why)", int(rc))
	}
	// The categories are the first strings: events name them by index
	// (otf2Trace.category), before any other string has an id.
	strs := append([]string(nil), t.categories...)
	str := func(s string) C.uint32_t {
		strs = append(strs, s)
		return C.uint32_t(len(strs) - 1)
	}
	attrName, attrDesc := str("category"), str("tracing category")
	type region struct{ name, canonical, file C.uint32_t }
	regions := make([]region, len(t.regionDef))
	for i, r := range t.regionDef {
		regions[i] = region{str(r.name), str(r.category + "::" + r.name), str(r.category)}
	}
	nodeName, nodeClass := str("host"), str("node")
	groups := make([]C.uint32_t, len(t.groups))
	for i, g := range t.groups {
		groups[i] = str(g)
	}
	locs := make([]C.uint32_t, len(t.locDefs))
	for i, l := range t.locDefs {
		locs[i] = str(l.name)
	}
	var rc C.int
	for i, s := range strs {
		cs := C.CString(s)
		rc |= C.rpg_otf2_string(a.t, C.uint32_t(i), cs)
		C.free(unsafe.Pointer(cs))
	}
	rc |= C.rpg_otf2_attribute(a.t, attrName, attrDesc)
	rc |= C.rpg_otf2_node(a.t, nodeName, nodeClass)
	for i, g := range groups {
		rc |= C.rpg_otf2_group(a.t, C.uint32_t(i), g)
	}
	for i, r := range regions {
		rc |= C.rpg_otf2_region(a.t, C.uint32_t(i), r.name, r.canonical, r.file)
	}
	for i, l := range t.locDefs {
		gpu := C.int(0)
		if strings.HasPrefix(l.name, model.Domains[model.DomKernel].Category) || strings.HasPrefix(l.name, model.Domains[model.DomCopy].Category) {
			gpu = 1
		}
		rc |= C.rpg_otf2_location(a.t, C.uint64_t(i), locs[i], C.uint64_t(l.events), C.uint32_t(l.group), gpu)
	}
	if rc != 0 {
		return fmt.Errorf("otf2: writing global definitions failed (the OTF2 library printed why)")
	}
	return nil
}

func (a otf2Archive) close() error {
	if a.t == nil {
		return nil
	}
	if rc := C.rpg_otf2_close(a.t); rc != 0 {
		return fmt.Errorf("otf2: closing the archive failed (step %d; the OTF2 library printed why)", int(rc))
	}
	return nil
}
