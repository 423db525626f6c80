package main

import (
	"debug/elf"
	"encoding/binary"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// entrySymbol is what a results.json kernel symbol says of its entry point.
type entrySymbol struct {
	KernelID     uint64 `json:"kernel_id"`
	CodeObjectID uint64 `json:"code_object_id"`
	Name         string `json:"kernel_name"`
	KernelObject uint64 `json:"kernel_object"`
	EntryOffset  int64  `json:"kernel_code_entry_byte_offset"`
	Address      struct {
		Handle uint64 `json:"handle"`
	} `json:"kernel_address"`
}

// entryResults reads a results.json's kernel symbols (the id-0 filler
// left out) and code object URIs.
func entryResults(t *testing.T, path string) ([]entrySymbol, map[uint64]string) {
	t.Helper()
	var doc struct {
		Tool []struct {
			Symbols     []entrySymbol `json:"kernel_symbols"`
			CodeObjects []struct {
				ID  uint64 `json:"code_object_id"`
				URI string `json:"uri"`
			} `json:"code_objects"`
		} `json:"rocprofiler-sdk-tool"`
	}
	readJSONFile(t, path, &doc)
	require.Len(t, doc.Tool, 1)
	var syms []entrySymbol
	for _, s := range doc.Tool[0].Symbols {
		if s.KernelID != 0 {
			syms = append(syms, s)
		}
	}
	uris := map[uint64]string{}
	for _, c := range doc.Tool[0].CodeObjects {
		uris[c.ID] = c.URI
	}
	return syms, uris
}

// uriNumber is the number key= of a code-object URI's fragment
// (#offset=...&size=..., as rocprofiler-sdk writes them).
func uriNumber(t *testing.T, uri, key string) int64 {
	t.Helper()
	u, err := url.Parse(uri)
	require.NoError(t, err)
	q, err := url.ParseQuery(u.Fragment)
	require.NoError(t, err, uri)
	n, err := strconv.ParseInt(q.Get(key), 0, 64)
	require.NoError(t, err, uri)
	return n
}

// descriptorEntryOffset reads kernel_code_entry_byte_offset (the int64 at
// byte 16 of the kernel descriptor, AMDGPU's code-object ABI) of symbol kd
// from the code object a file:// URI names, with its offset and size.
func descriptorEntryOffset(t *testing.T, uri, kd string) int64 {
	t.Helper()
	u, err := url.Parse(uri)
	require.NoError(t, err)
	off, size := uriNumber(t, uri, "offset"), uriNumber(t, uri, "size")
	f, err := os.Open(u.Path)
	require.NoError(t, err)
	defer f.Close()
	e, err := elf.NewFile(io.NewSectionReader(f, off, size))
	require.NoError(t, err, uri)
	syms, err := e.Symbols()
	require.NoError(t, err)
	for _, s := range syms {
		if s.Name != kd {
			continue
		}
		sec := e.Sections[s.Section]
		var b [8]byte
		_, err := sec.ReadAt(b[:], int64(s.Value-sec.Addr)+16)
		require.NoError(t, err)
		return int64(binary.LittleEndian.Uint64(b[:]))
	}
	t.Fatalf("%s: no symbol %s", uri, kd)
	return 0
}

// The kernel-symbol record's kernel_code_entry_byte_offset and
// kernel_address, as rocprofiler-sdk writes them, for HIP's blit kernels
// (a memory:// code object, gone after the run) and the app's own (a file
// in the app): the shim reads the descriptor at load, so every kernel has
// it; for the app's kernels it equals the code object's NAME.kd, read here
// independently; for the blit kernels the entry lies in the code object
// and is 256-byte aligned (AMDGPU's entry alignment). results.json and
// ROCpd's kernel_symbols view hold the same values, and convert of the
// database back to JSON gives them again. multistream, on the host's 5.2
// and the 6.4 and 7.2 roots.
func TestKernelEntryOffsetsRecordedAtLoad(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, []string{rocmmatrix.HostName, "6.4", "7.2"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		dir := t.TempDir()
		stderr, code := shippedOnRuntime(t, rt, cli, cache, 3*time.Minute, nil, "--virtual-gpu=gfx90a",
			"--kernel-trace", "-f", "json", "rocpd", "-d", dir, "--", filepath.Join(rt.Apps, "multistream"))
		require.Equal(t, 0, code, stderr)

		syms, uris := entryResults(t, pcsOne(t, dir, "results.json"))
		var memory, file int
		for _, s := range syms {
			uri := uris[s.CodeObjectID]
			require.NotZero(t, s.EntryOffset, "%s (%s)", s.Name, uri)
			require.Equal(t, s.KernelObject+uint64(s.EntryOffset), s.Address.Handle, "%s: kernel_address", s.Name)
			require.Zero(t, s.Address.Handle%256, "%s: entry %#x is 256-byte aligned", s.Name, s.Address.Handle)
			switch {
			case strings.HasPrefix(uri, "file://"):
				file++
				require.Equal(t, descriptorEntryOffset(t, uri, s.Name), s.EntryOffset, "%s: %s", s.Name, uri)
			case strings.HasPrefix(uri, "memory://"):
				memory++
				size := uriNumber(t, uri, "size")
				require.Greater(t, s.EntryOffset, int64(64), "%s: past its 64-byte descriptor", s.Name)
				require.Less(t, s.EntryOffset, size, "%s: inside its code object (%s)", s.Name, uri)
			default:
				t.Fatalf("%s: code object %d has URI %q", s.Name, s.CodeObjectID, uri)
			}
		}
		require.NotZero(t, file, "multistream's own kernels")
		require.NotZero(t, memory, "HIP's blit kernels")

		// ROCpd's kernel_symbols view: the same offsets and addresses.
		var want []string
		for _, s := range syms {
			want = append(want, strings.Join([]string{strconv.FormatUint(s.KernelID, 10), s.Name,
				strconv.FormatInt(s.EntryOffset, 10), strconv.FormatUint(s.Address.Handle, 10)}, "|"))
		}
		db := pcsOne(t, dir, "results.db")
		got := outputtest.SQLite3CLI(t, db, `SELECT kernel_id || '|' || kernel_name || '|' ||
				kernel_code_entry_byte_offset || '|' || kernel_address FROM kernel_symbols ORDER BY kernel_id`)
		require.Equal(t, want, strings.Split(got, "\n"))

		// convert: the database back to JSON holds the run's values.
		conv := t.TempDir()
		out, err := exec.Command(cli, "convert", "-i", db, "-f", "json", "-d", conv).CombinedOutput()
		require.NoError(t, err, string(out))
		m, _ := filepath.Glob(filepath.Join(conv, "*results.json"))
		if len(m) == 0 {
			m, _ = filepath.Glob(filepath.Join(conv, "*", "*results.json"))
		}
		require.Len(t, m, 1, "convert's results.json in %s", conv)
		back, _ := entryResults(t, m[0])
		require.Equal(t, syms, back)
	})
}
