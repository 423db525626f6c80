package tracing

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The header's time-namespace section: its tag is spool.h's, and both
// spellings of the kernel's file are read.
func TestTimensOffsets(t *testing.T) {
	dir := t.TempDir()
	c := filepath.Join(dir, "tag.c")
	require.NoError(t, os.WriteFile(c, []byte("#include \"spool.h\"\n#include <stdio.h>\nint main(void) { printf(\"%d\\n\", RPG_BLOB_TIMENS); return 0; }\n"), 0o644))
	bin := filepath.Join(dir, "tag")
	out, err := exec.Command("gcc", "-std=c11", "-Wall", "-Werror", "-I.", "-o", bin, c).CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command(bin).Output()
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(blobTimens), strings.TrimSpace(string(out)))

	for in, want := range map[string]int64{
		"monotonic 0 0\nboottime 86400 0\n":                       86400e9,
		"monotonic           0         0\nboottime   -1000 500\n": -1000e9 + 500,
		"1 5 0\n7 -86400 0\n":                                     -86400e9,
	} {
		ns, ok := ParseTimensOffsets(in)
		require.True(t, ok, in)
		require.Equal(t, want, ns, in)
	}
	_, ok := ParseTimensOffsets("monotonic 0 0\n")
	require.False(t, ok)
}
