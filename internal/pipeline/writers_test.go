package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The writers' settings from rocprof-go's environment: the Perfetto part
// size (bytes or K/M/G, under trace processor's 4 GB) and the spill
// directory; a bad value names the variable and what it takes.
func TestWriterSettings(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	n, dir, err := writerSettings(env())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, dir)
	for v, want := range map[string]uint64{"1048576": 1 << 20, "1M": 1 << 20, "64k": 64 << 10, "2G": 2 << 30} {
		n, _, err := writerSettings(env(EnvPerfettoPartBytes, v))
		require.NoError(t, err, v)
		require.Equal(t, want, n, v)
	}
	for _, v := range []string{"x", "1T", "-5", "100", "4G", "18446744073709551615G"} {
		_, _, err := writerSettings(env(EnvPerfettoPartBytes, v))
		require.ErrorContains(t, err, EnvPerfettoPartBytes+`="`+v+`" is not a part size: give bytes from 4096`, v)
	}

	mine := t.TempDir()
	_, dir, err = writerSettings(env(EnvSpillDir, mine))
	require.NoError(t, err)
	require.Equal(t, mine, dir)
	_, _, err = writerSettings(env(EnvSpillDir, "relative/dir"))
	require.ErrorContains(t, err, EnvSpillDir+`="relative/dir" is not an absolute path`)
	_, _, err = writerSettings(env(EnvSpillDir, filepath.Join(mine, "missing")))
	require.ErrorContains(t, err, "name a directory of yours on a local disk")
}

// Spill files go to the output directory's file system by default (where
// $TMPDIR may be a tmpfs, that is RAM), to the variable's directory when it
// is set, and to $TMPDIR when the output directory is one other users may
// change (securedir refuses to make files there that no one else may see).
func TestSpillRootIsTheOutputDirectory(t *testing.T) {
	out := t.TempDir()
	require.Equal(t, out, spillRoot("", out))
	require.Equal(t, "/chosen", spillRoot("/chosen", out))
	require.Equal(t, "", spillRoot("", ""))
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777)) // every user may write, no sticky bit
	require.Equal(t, "", spillRoot("", open))
}
