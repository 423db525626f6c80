package model

// Input is one output file set: the spools of the processes whose records
// go into the same files. The caller groups spools by resolved output path
// (rocprofv3's default `%hostname%/%pid%` gives one group per process).
type Input struct {
	Spools []string // spool paths, as tracing.List orders them
	Config Config
	// catalogues are the spools' catalogues (same order), when Write read
	// them once for every writer; nil: each writer scans its own.
	Catalogues []*Catalogue
	// PerfettoCapped counts, by process id, the records the Perfetto
	// writer left out of the trace at its buffer size
	// (Config.PerfettoBufferBytes); Write reports them in Group.
	PerfettoCapped map[int32]uint64
	// PerfettoParts are the files of a Perfetto trace written in parts
	// (Config.PerfettoPartBytes), with their records; nil: one file.
	PerfettoParts []File
}
