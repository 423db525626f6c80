package main

/*
#include <stdlib.h>
#include "shim.h"

// The spool this process writes (NULL before it is ready, or without the
// preload library).
static const char *rpg_pcs_spool_path(void)
{
    return rpg_spool_path ? rpg_spool_path() : NULL;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// pcsSampling says whether the CLI asked for PC sampling (read once).
var pcsSampling = sync.OnceValue(func() bool { return os.Getenv(toolenv.PCSamplingMethod) != "" })

// pcsCodeObjectSuffix names the copy of a memory:// code object beside the
// spool: <spool path><suffix><code object id>. internal/output reads it
// (pcinstructions.go spells the same name).
const pcsCodeObjectSuffix = ".codeobj."

// pcsCodeObject keeps a code object the app loaded from its own memory
// (memory:// URI: ROCclr's blit kernels, hipModuleLoadData, a module file
// HIP read itself) when PC sampling is on: the bytes are gone after the
// run, and the CLI disassembles sampled PCs (and reads their line table)
// only then. Files (file:// URIs) stay where they are. Called at
// executable freeze, for each loaded code object.
func pcsCodeObject(id uint64, uri string) {
	if !strings.HasPrefix(uri, "memory://") || !pcsSampling() {
		return
	}
	sp := C.rpg_pcs_spool_path()
	if sp == nil {
		return
	}
	data, err := codeObjectBytes(uri)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: PC sampling: code object %d: %v\n", id, err)
		return
	}
	path := fmt.Sprintf("%s%s%d", C.GoString(sp), pcsCodeObjectSuffix, id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocprof-go: PC sampling: code object %d: %v\n", id, err)
	}
}
