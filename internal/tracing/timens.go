package tracing

import (
	"strconv"
	"strings"
)

// blobTimens is the header's copy of the process's
// /proc/self/timens_offsets (RPG_BLOB_TIMENS in spool.h).
const blobTimens = 6

// BoottimeOffset is the CLOCK_BOOTTIME offset of the time namespace the
// process ran in (unshare --time --boottime, CLONE_NEWTIME), as its header
// recorded it: every CLOCK_BOOTTIME reading of the process, and so every
// host timestamp it recorded, is the machine's plus this. known is false
// for a spool without it (a kernel without time namespaces, an older
// recorder).
func (r *Reader) BoottimeOffset() (ns int64, known bool) {
	blob := r.data[HeaderFixedSize:ChunkSize]
	if n := le.Uint32(r.data[44:]); uint64(n) < uint64(len(blob)) {
		blob = blob[:n]
	}
	for len(blob) >= 8 {
		tag, n := le.Uint32(blob), le.Uint32(blob[4:])
		if tag == blobEnd || uint64(n) > uint64(len(blob)-8) {
			break
		}
		if tag == blobTimens {
			return ParseTimensOffsets(string(blob[8 : 8+n]))
		}
		step := 8 + pad8(int(n))
		if step > len(blob) {
			break
		}
		blob = blob[step:]
	}
	return 0, false
}

// ParseTimensOffsets reads the boottime offset of a timens_offsets file
// ("monotonic S NS\nboottime S NS\n"; older kernels name the clocks by
// number, 1 and 7).
func ParseTimensOffsets(s string) (ns int64, ok bool) {
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || (f[0] != "boottime" && f[0] != "7") {
			continue
		}
		sec, err1 := strconv.ParseInt(f[1], 10, 64)
		nsec, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		return sec*1e9 + nsec, true
	}
	return 0, false
}
