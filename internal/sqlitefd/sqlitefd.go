//go:build cgo

package sqlitefd

/*
#include <string.h>
#include <sys/stat.h>

// The start of SQLite's sqlite3_vfs (its stable ABI, version 3 and later):
// only xSetSystemCall is used.
typedef void (*rpg_syscall_ptr)(void);
typedef struct rpg_vfs rpg_vfs;
struct rpg_vfs {
	int iVersion, szOsFile, mxPathname;
	rpg_vfs *pNext;
	const char *zName;
	void *pAppData;
	void *xOpen, *xDelete, *xAccess, *xFullPathname, *xDlOpen, *xDlError, *xDlSym, *xDlClose,
		*xRandomness, *xSleep, *xCurrentTime, *xGetLastError, *xCurrentTimeInt64;
	int (*xSetSystemCall)(rpg_vfs *, const char *, rpg_syscall_ptr);
};
rpg_vfs *sqlite3_vfs_find(const char *);

// /proc/self, and every path below it, is stat()ed: the magic links there
// name open files, not text to re-resolve.
static int rpg_lstat(const char *path, struct stat *st) {
	if (strncmp(path, "/proc/self", 10) == 0 && (path[10] == 0 || path[10] == '/'))
		return stat(path, st);
	return lstat(path, st);
}

static int rpg_install(void) {
	rpg_vfs *vfs = sqlite3_vfs_find("unix");
	if (vfs == 0 || vfs->iVersion < 3 || vfs->xSetSystemCall == 0)
		return -1;
	return vfs->xSetSystemCall(vfs, "lstat", (rpg_syscall_ptr)rpg_lstat);
}
*/
import "C"

import (
	"fmt"
	"sync"

	_ "github.com/mattn/go-sqlite3" // links SQLite
)

var install = sync.OnceValue(func() error {
	if rc := C.rpg_install(); rc != 0 {
		return fmt.Errorf("sqlite: cannot hook its lstat (code %d): an output inside a held directory cannot be opened", int(rc))
	}
	return nil
})

// Install hooks SQLite's path resolution (see the package comment); call it
// before SQLite opens a /proc/self/fd path. It is done once per process.
func Install() error { return install() }
