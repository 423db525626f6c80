package parquet

import (
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// Arrow's zstd codec pools encoders made with zstd's default 8 MiB window,
// whose history buffer is 16 MiB each: with one encoder per busy column
// writer that was most of the Parquet writer's heap. Parquet compresses a
// page at a time and pages are about 1 MiB, so a 1 MiB window loses nothing.
// pqZstdCodec replaces the registered codec for the writer's level (1) and
// hands everything else, decoding included, to Arrow's own.
type pqZstdCodec struct {
	compress.Codec // Arrow's codec
	pool           sync.Pool
}

const pqZstdLevel = 1

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return
	}
	if _, ok := orig.(compress.StreamingCodec); !ok {
		return // an Arrow whose codec differs from the one this wraps
	}
	c := &pqZstdCodec{Codec: orig}
	c.pool.New = func() any {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(pqZstdLevel)),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true),
			zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // constant options
		}
		return enc
	}
	compress.RegisterCodec(compress.Codecs.Zstd, c)
}

func (c *pqZstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	if level != pqZstdLevel {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	enc := c.pool.Get().(*zstd.Encoder)
	defer c.pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

// DecodeWithError keeps Arrow's error-returning decoder reachable.
func (c *pqZstdCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	return compress.Decode(c.Codec, dst, src)
}

// The streaming methods keep Arrow's streaming page reader available, as
// its own zstd codec offers it.

func (c *pqZstdCodec) NewReader(r io.Reader) io.ReadCloser {
	return c.Codec.(compress.StreamingCodec).NewReader(r)
}

func (c *pqZstdCodec) NewWriter(w io.Writer) io.WriteCloser {
	return c.Codec.(compress.StreamingCodec).NewWriter(w)
}

func (c *pqZstdCodec) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.Codec.(compress.StreamingCodec).NewWriterLevel(w, level)
}
