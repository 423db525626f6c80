package main

/*
#cgo CFLAGS: -O2 -fvisibility=hidden -I/usr/include/hsa
#cgo CXXFLAGS: -O2 -std=c++17 -fvisibility=hidden -fno-exceptions -fno-rtti -DAMD_INTERNAL_BUILD -I/usr/include/hsa
#cgo LDFLAGS: -lpthread
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// A GPU node has over a hundred cores; an unconfigured Go runtime would grow
// that many threads inside the app for work that happens a few times per run.
func init() {
	runtime.GOMAXPROCS(2)
	C.shim_mark_go_ready()
}

// main is required by -buildmode=c-shared and never runs.
func main() {}

// guard turns a panic into a silent return: an unrecovered panic in an
// exported function would kill the app with exit status 2.
func guard() {
	_ = recover()
}

//export rpgGoSetup
func rpgGoSetup() {
	defer guard()
	// Reaching here means init has run: nothing else to prepare yet.
}

// symbols is the process's code-object and kernel symbol table.
var symbols = struct {
	sync.Mutex
	nextKernel     uint64
	nextCodeObject uint64
	byExecutable   map[uint64][]codeObject
}{byExecutable: map[uint64][]codeObject{}}

type codeObject struct {
	id        uint64
	agentNode uint32
}

//export rpgGoExecutableFrozen
func rpgGoExecutableFrozen(exec C.uint64_t) {
	defer guard()
	executableFrozen(uint64(exec))
}

//export rpgGoExecutableDestroyed
func rpgGoExecutableDestroyed(exec C.uint64_t) {
	defer guard()
	executableDestroyed(uint64(exec))
}

func executableFrozen(exec uint64) {
	symbols.Lock()
	defer symbols.Unlock()
	if _, seen := symbols.byExecutable[exec]; seen {
		return // frozen twice: the runtime refuses the second, nothing new
	}
	now := uint64(C.rpg_now())
	var cos []codeObject
	nco := int(C.shim_executable_code_objects(C.uint64_t(exec), nil, 0))
	if nco > 0 {
		arr := make([]C.shim_code_object, nco)
		n := int(C.shim_executable_code_objects(C.uint64_t(exec), &arr[0], C.int(nco)))
		for i := 0; i < n && i < nco; i++ {
			co := &arr[i]
			symbols.nextCodeObject++
			rec := C.rpg_code_object_rec{
				code_object_id: C.uint64_t(symbols.nextCodeObject),
				operation:      C.RPG_CODE_OBJECT_LOAD,
				agent_node:     co.agent_node,
				storage_type:   co.storage_type,
				load_base:      co.load_base,
				load_size:      co.load_size,
				load_delta:     C.uint64_t(co.load_delta),
				timestamp_ns:   C.uint64_t(now),
			}
			C.rpg_record_code_object(&rec, co.uri, C.size_t(co.uri_len))
			attCodeObject(symbols.nextCodeObject, uint32(co.agent_node), C.GoStringN(co.uri, C.int(co.uri_len)),
				uint64(co.load_base), uint64(co.load_size), int64(co.load_delta))
			pcsCodeObject(symbols.nextCodeObject, C.GoStringN(co.uri, C.int(co.uri_len)))
			C.free(unsafe.Pointer(co.uri))
			cos = append(cos, codeObject{id: symbols.nextCodeObject, agentNode: uint32(co.agent_node)})
		}
	}
	symbols.byExecutable[exec] = cos
	nsym := int(C.shim_executable_symbols(C.uint64_t(exec), nil, 0))
	if nsym <= 0 {
		return
	}
	arr := make([]C.shim_symbol, nsym)
	n := int(C.shim_executable_symbols(C.uint64_t(exec), &arr[0], C.int(nsym)))
	for i := 0; i < n && i < nsym; i++ {
		s := &arr[i]
		symbols.nextKernel++
		rec := C.rpg_kernel_symbol_rec{
			kernel_id:            C.uint64_t(symbols.nextKernel),
			code_object_id:       C.uint64_t(codeObjectFor(cos, uint32(s.agent_node))),
			kernel_object:        s.kernel_object,
			kernarg_size:         s.kernarg_size,
			group_segment_size:   s.group_segment_size,
			private_segment_size: s.private_segment_size,
			vgpr_count:           s.vgpr_count,
			agpr_count:           s.agpr_count,
			sgpr_count:           s.sgpr_count,
			entry_offset:         s.entry_offset,
		}
		C.rpg_record_kernel_symbol(&rec, s.name, C.size_t(s.name_len))
		info := C.shim_kernel_info{
			kernel_id:          C.uint64_t(symbols.nextKernel),
			vgpr_count:         s.vgpr_count,
			agpr_count:         s.agpr_count,
			sgpr_count:         s.sgpr_count,
			group_segment_size: s.group_segment_size,
		}
		C.shim_kmap_put(s.kernel_object, &info)
		pmcKernelSymbol(uint64(s.kernel_object), C.GoStringN(s.name, C.int(s.name_len)))
		C.free(unsafe.Pointer(s.name))
	}
}

// codeObjectFor picks the executable's code object loaded for the symbol's
// agent (an executable holds one per agent it was loaded for).
func codeObjectFor(cos []codeObject, node uint32) uint64 {
	for _, c := range cos {
		if c.agentNode == node {
			return c.id
		}
	}
	if len(cos) > 0 {
		return cos[0].id
	}
	return 0
}

func executableDestroyed(exec uint64) {
	symbols.Lock()
	defer symbols.Unlock()
	cos, ok := symbols.byExecutable[exec]
	if !ok {
		return
	}
	delete(symbols.byExecutable, exec)
	now := uint64(C.rpg_now())
	for _, co := range cos {
		rec := C.rpg_code_object_rec{
			code_object_id: C.uint64_t(co.id),
			operation:      C.RPG_CODE_OBJECT_UNLOAD,
			agent_node:     C.uint32_t(co.agentNode),
			timestamp_ns:   C.uint64_t(now),
		}
		C.rpg_record_code_object(&rec, nil, 0)
		attCodeObjectUnloaded(co.id, co.agentNode)
	}
}

// decodeDescriptor exposes descriptor.c to the tests.
func decodeDescriptor(kd []byte, major, minor uint32) (vgpr, agpr, sgpr uint32) {
	var v, a, s C.uint32_t
	C.shim_decode_descriptor(unsafe.Pointer(&kd[0]), C.uint32_t(major), C.uint32_t(minor), &v, &a, &s)
	return uint32(v), uint32(a), uint32(s)
}

// kmapPut and kmapGet expose the kernel-object map to the tests.
func kmapPut(ko uint64, id uint64) {
	info := C.shim_kernel_info{kernel_id: C.uint64_t(id)}
	C.shim_kmap_put(C.uint64_t(ko), &info)
}

func kmapGet(ko uint64) (uint64, bool) {
	var info C.shim_kernel_info
	ok := C.shim_kmap_get(C.uint64_t(ko), &info) != 0
	return uint64(info.kernel_id), ok
}
