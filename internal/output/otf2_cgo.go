//go:build cgo

package output

// The OTF2 writer links Debian's OTF2 library (libotf2-trace-dev). Events
// cross into C in batches; definitions, written once at the end, one call
// each.

/*
#cgo pkg-config: otf2
#include <stdlib.h>
#include <stdint.h>
#include <otf2/otf2.h>

typedef struct {
	uint64_t loc;
	uint64_t time;
	uint32_t region;
	uint32_t leave;
} rpg_otf2_event;

typedef struct {
	OTF2_Archive *archive;
	OTF2_EvtWriter **writers;
	size_t nwriters;
	OTF2_GlobalDefWriter *defs;
} rpg_otf2;

static OTF2_FlushType rpg_pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
                                    void *caller, bool final) {
	return OTF2_FLUSH;
}

static OTF2_TimeStamp rpg_post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc) {
	return 0;
}

static OTF2_FlushCallbacks rpg_flush_callbacks = {
	.otf2_pre_flush = rpg_pre_flush,
	.otf2_post_flush = rpg_post_flush,
};

static int rpg_otf2_open(const char *dir, const char *name, rpg_otf2 **out) {
	rpg_otf2 *t = calloc(1, sizeof *t);
	if (!t) return -1;
	t->archive = OTF2_Archive_Open(dir, name, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
	                               OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!t->archive) { free(t); return -2; }
	if (OTF2_Archive_SetFlushCallbacks(t->archive, &rpg_flush_callbacks, NULL) != OTF2_SUCCESS ||
	    OTF2_Archive_SetSerialCollectiveCallbacks(t->archive) != OTF2_SUCCESS ||
	    OTF2_Archive_OpenEvtFiles(t->archive) != OTF2_SUCCESS) {
		OTF2_Archive_Close(t->archive);
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
	if (!t->writers[loc]) t->writers[loc] = OTF2_Archive_GetEvtWriter(t->archive, loc);
	return t->writers[loc];
}

static int rpg_otf2_events(rpg_otf2 *t, const rpg_otf2_event *ev, int n) {
	for (int i = 0; i < n; i++) {
		OTF2_EvtWriter *w = rpg_writer(t, ev[i].loc);
		if (!w) return -1;
		OTF2_ErrorCode rc = ev[i].leave ? OTF2_EvtWriter_Leave(w, NULL, ev[i].time, ev[i].region)
		                                : OTF2_EvtWriter_Enter(w, NULL, ev[i].time, ev[i].region);
		if (rc != OTF2_SUCCESS) return (int)rc;
	}
	return 0;
}

// rpg_otf2_begin_defs closes the event files and opens the definitions.
static int rpg_otf2_begin_defs(rpg_otf2 *t, uint64_t nlocs, uint64_t begin, uint64_t length) {
	for (size_t i = 0; i < t->nwriters; i++)
		if (t->writers[i]) OTF2_Archive_CloseEvtWriter(t->archive, t->writers[i]);
	free(t->writers);
	t->writers = NULL;
	t->nwriters = 0;
	if (OTF2_Archive_CloseEvtFiles(t->archive) != OTF2_SUCCESS) return -1;
	// Every location needs a (here empty) local definitions file.
	if (OTF2_Archive_OpenDefFiles(t->archive) != OTF2_SUCCESS) return -2;
	for (uint64_t l = 0; l < nlocs; l++) {
		OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(t->archive, l);
		if (d) OTF2_Archive_CloseDefWriter(t->archive, d);
	}
	if (OTF2_Archive_CloseDefFiles(t->archive) != OTF2_SUCCESS) return -3;
	t->defs = OTF2_Archive_GetGlobalDefWriter(t->archive);
	if (!t->defs) return -4;
	return OTF2_GlobalDefWriter_WriteClockProperties(t->defs, 1000000000, begin, length, OTF2_UNDEFINED_TIMESTAMP);
}

static int rpg_otf2_string(rpg_otf2 *t, uint32_t id, const char *s) {
	return OTF2_GlobalDefWriter_WriteString(t->defs, id, s);
}

static int rpg_otf2_region(rpg_otf2 *t, uint32_t id, uint32_t name, uint32_t canonical, uint32_t file) {
	return OTF2_GlobalDefWriter_WriteRegion(t->defs, id, name, canonical, canonical,
	                                        OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
	                                        OTF2_REGION_FLAG_NONE, file, 0, 0);
}

static int rpg_otf2_node(rpg_otf2 *t, uint32_t name, uint32_t cls) {
	return OTF2_GlobalDefWriter_WriteSystemTreeNode(t->defs, 0, name, cls, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
}

static int rpg_otf2_group(rpg_otf2 *t, uint32_t id, uint32_t name) {
	return OTF2_GlobalDefWriter_WriteLocationGroup(t->defs, id, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
	                                               OTF2_UNDEFINED_LOCATION_GROUP);
}

static int rpg_otf2_location(rpg_otf2 *t, uint64_t id, uint32_t name, uint64_t events, uint32_t group,
                             int gpu) {
	return OTF2_GlobalDefWriter_WriteLocation(t->defs, id, name,
	                                          gpu ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM : OTF2_LOCATION_TYPE_CPU_THREAD,
	                                          events, group);
}

static int rpg_otf2_close(rpg_otf2 *t) {
	int rc = 0;
	if (t->writers) {
		for (size_t i = 0; i < t->nwriters; i++)
			if (t->writers[i]) OTF2_Archive_CloseEvtWriter(t->archive, t->writers[i]);
		free(t->writers);
		OTF2_Archive_CloseEvtFiles(t->archive);
	}
	if (OTF2_Archive_Close(t->archive) != OTF2_SUCCESS) rc = -1;
	free(t);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// otf2Archive is the C library's archive.
type otf2Archive struct{ t *C.rpg_otf2 }

func openOTF2(dir, name string) (otf2Archive, error) {
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
		return fmt.Errorf("otf2: writing events failed (code %d)", int(rc))
	}
	return nil
}

func (a otf2Archive) definitions(t *otf2Trace) error {
	if rc := C.rpg_otf2_begin_defs(a.t, C.uint64_t(len(t.locDefs)), C.uint64_t(t.begin), C.uint64_t(t.end-t.begin)); rc != 0 {
		return fmt.Errorf("otf2: writing definitions failed (code %d)", int(rc))
	}
	var strs []string
	str := func(s string) C.uint32_t {
		strs = append(strs, s)
		return C.uint32_t(len(strs) - 1)
	}
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
	rc |= C.rpg_otf2_node(a.t, nodeName, nodeClass)
	for i, g := range groups {
		rc |= C.rpg_otf2_group(a.t, C.uint32_t(i), g)
	}
	for i, r := range regions {
		rc |= C.rpg_otf2_region(a.t, C.uint32_t(i), r.name, r.canonical, r.file)
	}
	for i, l := range t.locDefs {
		gpu := C.int(0)
		if strings.HasPrefix(l.name, domainNames[domKernel].category) || strings.HasPrefix(l.name, domainNames[domCopy].category) {
			gpu = 1
		}
		rc |= C.rpg_otf2_location(a.t, C.uint64_t(i), locs[i], C.uint64_t(l.events), C.uint32_t(l.group), gpu)
	}
	if rc != 0 {
		return fmt.Errorf("otf2: writing global definitions failed")
	}
	return nil
}

func (a otf2Archive) close() error {
	if a.t == nil {
		return nil
	}
	if rc := C.rpg_otf2_close(a.t); rc != 0 {
		return fmt.Errorf("otf2: closing the archive failed")
	}
	return nil
}
