package format

import "strings"

// Name is a format as -f spells it.
type Name string

// The formats, as rocprofv3 names them, and rocprof-go's Parquet.
const (
	CSV      Name = "csv"
	JSON     Name = "json"
	Perfetto Name = "pftrace"
	OTF2     Name = "otf2"
	ROCpd    Name = "rocpd"
	Parquet  Name = "parquet"
)

// All are the formats in the order help lists them.
var All = []Name{CSV, JSON, Perfetto, OTF2, ROCpd, Parquet}

// Names are All as strings (the option table's choices).
func Names() []string {
	s := make([]string, len(All))
	for i, n := range All {
		s[i] = string(n)
	}
	return s
}

// Is reports whether f, as given to -f (any case, as -f accepts), names n.
func (n Name) Is(f string) bool { return strings.EqualFold(f, string(n)) }
