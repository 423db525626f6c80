package atomicfile

import (
	"os"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// MkdirAll creates an output directory and its missing parents like
// os.MkdirAll, by securedir's rule for output directories: each directory
// is walked on descriptors (O_NOFOLLOW) and created with mkdirat through
// its verified parent; a directory on the path that every user can write
// without the sticky bit is refused (any of them could swap it for a link
// to a directory of theirs), and so is a symbolic link that someone else
// planted on the way (in a shared output directory, -d /shared/prof,
// another user's link named like a per-host or per-rank sub-directory
// would lead the outputs into a directory of their choosing). Links owned
// by this user, root or the directory's owner are followed;
// group-writable directories are allowed.
func MkdirAll(dir string, perm os.FileMode) error {
	d, err := securedir.MkdirOutput(dir, perm)
	if err != nil {
		return err
	}
	return d.Close()
}
