package launch

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// networkFS are the statfs magic numbers of file systems shared between
// nodes (or served by a process, as FUSE is): a MAP_SHARED spool's pages
// would be written back over the network while the app records, and a
// library cache there is read by every rank of every node.
var networkFS = map[int64]string{
	0x6969: "NFS", 0x0BD00BD0: "Lustre", 0x47504653: "GPFS", 0x19830326: "BeeGFS", 0x00C36400: "CephFS",
	-0x00ACB2BE /* 0xFF534D42 */ : "CIFS", -0x01ACB2BE /* 0xFE534D42 */ : "SMB2", 0x01021997: "9P", 0x65735546: "FUSE",
	-0x55285516 /* 0xAAD7AAEA */ : "PanFS", 0x5346414F: "AFS",
}

// sharedName names a statfs type when it is one of networkFS.
func sharedName(st *unix.Statfs_t) (string, bool) {
	name, ok := networkFS[int64(int32(st.Type))]
	return name, ok
}

// sharedFileSystemOf says whether a verified directory is on a shared file
// system, and which.
func sharedFileSystemOf(d *securedir.Dir) (string, bool, error) {
	f, err := d.Open(".")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return "", false, err
	}
	name, ok := sharedName(&st)
	return name, ok, nil
}

// sharedFileSystemAt says whether path, or its nearest existing parent
// (for a directory still to be created), is on a shared file system.
func sharedFileSystemAt(path string) (string, bool) {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err == nil {
			return sharedName(&st)
		} else if !os.IsNotExist(err) || p == "/" || p == "." {
			return "", false
		}
	}
}

// noexecAt says whether path, or its nearest existing parent (for a
// directory still to be created), is on a file system mounted noexec, and
// that file system's mount point: a library there cannot be mapped
// executable, so the loader would refuse it in every process of the app.
func noexecAt(path string) (bool, string) {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err == nil {
			if st.Flags&unix.ST_NOEXEC == 0 {
				return false, ""
			}
			return true, mountPoint(p)
		} else if !os.IsNotExist(err) || p == "/" || p == "." {
			return false, ""
		}
	}
}

// mountPoint is the top directory of the file system holding the existing
// directory dir: its highest ancestor on the same device.
func mountPoint(dir string) string {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return dir
	}
	for dir != "/" {
		var up unix.Stat_t
		parent := filepath.Dir(dir)
		if unix.Stat(parent, &up) != nil || up.Dev != st.Dev {
			break
		}
		dir = parent
	}
	return dir
}
