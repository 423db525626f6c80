// Command parquetcheck reads Parquet files with parquet-go, a reader
// independent of the Arrow writer, and prints one line per file:
//
//	<path> rows=<n> duration_sum=<ns> codecs=<set> dict=<string columns dictionary-encoded>
//
// The output package's tests run it; it is its own module so that its
// dependency stays out of rocprof-go's go.mod.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

func main() {
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func check(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return err
	}
	var sum uint64
	if leaf, ok := pf.Schema().Lookup("duration_ns"); ok {
		for _, rg := range pf.RowGroups() {
			pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
			for {
				p, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				vals := make([]parquet.Value, p.NumValues())
				n, err := p.Values().ReadValues(vals)
				if err != nil && err != io.EOF {
					return err
				}
				for _, v := range vals[:n] {
					sum += v.Uint64()
				}
			}
			pages.Close()
		}
	}
	codecs := map[string]bool{}
	dict := true
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			md := c.MetaData
			codecs[md.Codec.String()] = true
			if md.Type == format.ByteArray {
				hasDict := false
				for _, e := range md.Encoding {
					if e == format.RLEDictionary || e == format.PlainDictionary {
						hasDict = true
					}
				}
				dict = dict && hasDict
			}
		}
	}
	names := make([]string, 0, len(codecs))
	for c := range codecs {
		names = append(names, c)
	}
	sort.Strings(names)
	fmt.Printf("%s rows=%d duration_sum=%d codecs=%s dict=%t\n", path, pf.NumRows(), sum,
		strings.Join(names, ","), dict)
	return nil
}
