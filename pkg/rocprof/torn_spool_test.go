package rocprof_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// mappedSpool is the path of a spool under root this process has mapped
// (a reader of the outputs), with its mapping's address range, or "".
func mappedSpool(root string) (path, at string) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 6 && strings.HasPrefix(fields[5], root+"/") && strings.HasSuffix(fields[5], ".spool") {
			return fields[5], fields[0]
		}
	}
	return "", ""
}

// A Go program whose run's spool is cut short while the outputs are read
// from it (its owner, or whoever could write it, truncates it) is told by
// Run's error: a *rocprof.TornSpoolError naming the spool, the byte from
// which its records are lost and how many chunks, also in run.json's
// error; the CLI's check is no longer needed for it. Before, Run's error
// held no TornSpoolError: the zero pages past the cut counted as chunks
// the spool's file system had not kept ("the spool's file system was full
// or too small"), the truncation unnamed; only the CLI, through a
// process-wide list, named it.
func TestRunReturnsASpoolCutShortWhileRead(t *testing.T) {
	libEnv(t)
	spools := t.TempDir()
	t.Setenv("ROCPROF_GO_SPOOL_ROOT", spools)
	app := filepath.Join(buildDir(), "testdata", "hip_calls_rate")
	for round := range 6 {
		out := t.TempDir()
		stop := make(chan struct{})
		// The watcher's verdict, once it is done: the spool it cut, or ""
		// when it cut none.
		verdict := make(chan string, 1)
		go func() {
			// Once a reader has held the spool for 2 ms (the catalogue's
			// or a writer's pass over it, not the header's glance), cut it
			// to four chunks.
			var seen, since string
			var first time.Time
			for {
				select {
				case <-stop:
					verdict <- ""
					return
				default:
				}
				p, at := mappedSpool(spools)
				switch {
				case p == "":
					seen = ""
				case p+at != seen:
					seen, since, first = p+at, p, time.Now()
				case time.Since(first) > 2*time.Millisecond:
					if os.Truncate(since, 4*tracing.ChunkSize) != nil {
						since = ""
					}
					verdict <- since
					return
				}
				time.Sleep(100 * time.Microsecond)
			}
		}()
		var progress bytes.Buffer
		res, err := rocprof.Run(context.Background(), rocprof.Options{
			Args:     []string{"--virtual-gpu", "--hip-runtime-trace", "-f", "csv", "-d", out, "-o", "run"},
			Progress: &progress,
		}, []string{app, "1000000"})
		close(stop)
		path := <-verdict
		var torn *rocprof.TornSpoolError // tracing.TornSpoolError, for programs outside the module
		switch {
		case path == "":
			require.NoError(t, err, "round %d: the spool was not cut", round)
		case errors.As(err, &torn):
			require.Equal(t, path, torn.Path)
			require.Equal(t, int64(4*tracing.ChunkSize), torn.At)
			require.Greater(t, torn.LostChunks, uint64(100), "a million calls fill hundreds of 64 KiB chunks")
			require.Contains(t, err.Error(), "was cut short (truncated by its owner or another process) while it was read")
			require.NotNil(t, res)
			require.Contains(t, res.Manifest.Error, "spool "+path+" was cut short")
			for _, u := range tracing.UnreportedTornSpools() {
				require.NotEqual(t, path, u.Path, "Run returned it: reported")
			}
			t.Logf("round %d: %v", round, err)
			return
		default:
			// Cut between two readers (the one that held it had let it go:
			// the next one read the shorter file, no fault), or the loss
			// did not reach Run's error as the cut. Again.
			t.Logf("round %d: cut, and no TornSpoolError (%v); again", round, err)
		}
	}
	t.Fatal("no round cut the spool while the outputs were read from it")
}
