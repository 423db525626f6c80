package output

import (
	"bytes"
	"io"
	"sync"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// streamFS writes every file to one stream, whole files one after another:
// a file is held until it is closed (the CSV files of a set are written
// side by side, so streaming them as they grow would interleave them).
type streamFS struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *streamFS) MkdirAll(string) error { return nil }

func (s *streamFS) Create(string) (model.OutputFile, error) { return &streamFile{fs: s}, nil }

type streamFile struct {
	fs  *streamFS
	buf bytes.Buffer
}

func (f *streamFile) Write(p []byte) (int, error) { return f.buf.Write(p) }

// Abort drops a file that failed.
func (f *streamFile) Abort() { f.buf = bytes.Buffer{} }

// Commit writes the whole file to the stream.
func (f *streamFile) Commit() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	_, err := f.fs.w.Write(f.buf.Bytes())
	f.buf = bytes.Buffer{}
	return err
}
