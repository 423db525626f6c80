package tracing

import (
	"errors"
	"strconv"
)

// ErrNotSpool means a file is not a (completely created) spool.
var ErrNotSpool = errors.New("not a rocprof-go spool")

// VersionError is a spool written by an incompatible recorder.
type VersionError struct{ Version uint32 }

func (e *VersionError) Error() string {
	return "spool format version " + strconv.FormatUint(uint64(e.Version), 10) +
		" is not supported (this reader knows version " +
		strconv.FormatUint(uint64(SpoolVersion), 10) + "): use the rocprof-go that recorded it"
}

// Is makes errors.Is(err, ErrNotSpool) hold for version mismatches too.
func (e *VersionError) Is(target error) bool { return target == ErrNotSpool }
