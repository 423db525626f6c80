package otf2

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// otf2ABICheck compiles otf2_api.h's lists against OTF2's own headers: a
// type, constant or function signature that differs fails the compile.
const otf2ABICheck = `
#include <stddef.h>
#include <otf2/otf2.h>
#define RPG_OTF2_SYSTEM_HEADERS
#include "otf2_api.h"

#define CHECK_TYPE(type, name) \
	_Static_assert(__builtin_types_compatible_p(type, name), #name " is not " #type);
RPG_OTF2_TYPES(CHECK_TYPE)

#define CHECK_CONSTANT(type, name, value) \
	_Static_assert((type)(name) == (type)(value), #name " is not " #value);
RPG_OTF2_CONSTANTS(CHECK_CONSTANT)

#define CHECK_FUNCTION(ret, name, params) ret(*check_##name) params = name;
RPG_OTF2_FUNCTIONS(CHECK_FUNCTION)

_Static_assert(__builtin_types_compatible_p(rpg_otf2_pre_flush, OTF2_PreFlushCallback), "pre flush");
_Static_assert(__builtin_types_compatible_p(rpg_otf2_post_flush, OTF2_PostFlushCallback), "post flush");
_Static_assert(sizeof(struct rpg_otf2_flush_callbacks) == sizeof(OTF2_FlushCallbacks), "flush callbacks size");
_Static_assert(offsetof(struct rpg_otf2_flush_callbacks, otf2_pre_flush) ==
	offsetof(OTF2_FlushCallbacks, otf2_pre_flush), "otf2_pre_flush");
_Static_assert(offsetof(struct rpg_otf2_flush_callbacks, otf2_post_flush) ==
	offsetof(OTF2_FlushCallbacks, otf2_post_flush), "otf2_post_flush");
_Static_assert(__builtin_types_compatible_p(rpg_otf2_allocate, OTF2_MemoryAllocate), "allocate");
_Static_assert(__builtin_types_compatible_p(rpg_otf2_free_all, OTF2_MemoryFreeAll), "free all");
_Static_assert(sizeof(struct rpg_otf2_memory_callbacks) == sizeof(OTF2_MemoryCallbacks), "memory callbacks size");
_Static_assert(offsetof(struct rpg_otf2_memory_callbacks, otf2_free_all) ==
	offsetof(OTF2_MemoryCallbacks, otf2_free_all), "otf2_free_all");
`

// The OTF2 declarations the writer is built with (otf2_api.h, no OTF2
// headers needed) equal those of the installed OTF2 (Debian
// libopen-trace-format2-dev, which make deps installs).
func TestOTF2DeclarationsMatchTheOTF2Headers(t *testing.T) {
	src := filepath.Join(t.TempDir(), "otf2_abi_check.c")
	require.NoError(t, os.WriteFile(src, []byte(otf2ABICheck), 0o644))
	pkg, err := os.Getwd()
	require.NoError(t, err)
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	out, err := exec.Command(cc, "-std=gnu11", "-fsyntax-only", "-Wall", "-Werror", "-I", pkg, src).CombinedOutput()
	require.NoError(t, err, "otf2_api.h differs from <otf2/otf2.h> (or the OTF2 headers are missing: apt-get install libopen-trace-format2-dev):\n%s", out)
}
