package launch

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// spoolProbe is the file noteSpoolReservation makes and removes in the
// run's directory.
const spoolProbe = ".fallocate-probe"

// noteSpoolReservation notes a spool file system that cannot reserve space
// (no fallocate: FUSE such as bindfs, NFSv3). The recorder then reserves
// each 4 MiB of a spool by writing its zeros and syncing them (recorder.c,
// reserve_by_writing), so that a store that fills drops records it counts
// instead of losing written ones when their pages are written back; that
// writes every segment twice, tens of milliseconds each through FUSE. The
// run goes on: nothing is lost, it is only slower than a local tmpfs.
func noteSpoolReservation(w io.Writer, runDir *securedir.Dir) {
	if w == nil {
		return
	}
	f, err := runDir.Create(spoolProbe, 0o600)
	if err != nil {
		return
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, 4096)
	f.Close()
	_ = runDir.Remove(spoolProbe)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		fmt.Fprintf(w, "rocprof-go: note: the spool file system of %s cannot reserve space (it has no fallocate: FUSE or NFS): each 4 MiB of a spool is reserved by writing it, which slows the recording; spools on a local tmpfs are faster (%s=DIR)\n",
			runDir.Path(), SpoolRootEnv)
	}
}
