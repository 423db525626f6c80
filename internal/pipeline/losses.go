package pipeline

// What a run reports lost or missing, per process: the pipeline finds these
// in the passes' spools and results (domains.go, gpustack.go, outputs.go)
// and writes them to run.json and the end-of-run report.

// NoGPU is one process whose GPU stack found no GPU, why, and what the
// thunk said about it when it could tell.
type NoGPU struct {
	PID    int    `json:"pid"`
	Reason string `json:"reason"` // e.g. "hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"
	// Diagnosis are the lines the thunk (libhsakmt) printed when hsa_init
	// ran again in a probe with HSAKMT_DEBUG_LEVEL=3: its topology errors,
	// e.g. "Fail to get cache info for node 0"; none when it printed none.
	Diagnosis []string `json:"diagnosis,omitempty"`
}

// RecordLoss is one process's records that did not reach the outputs.
type RecordLoss struct {
	PID int `json:"pid"`
	// Dropped records were never stored: the spool could not grow (its file
	// system was full) or a record was too large; counted by the app.
	Dropped uint64 `json:"dropped,omitempty"`
	// Torn records were started but never published (the process died
	// while writing them).
	Torn uint64 `json:"torn,omitempty"`
	// LostChunks are spool chunks the app wrote that read back empty: the
	// spool's file system accepted the writes and did not keep them (FUSE
	// or NFS without room, whose write-back failed). Every record in them
	// is lost, up to a chunk's worth (64 KiB) each; how many is unknown.
	LostChunks uint64 `json:"lost_chunks,omitempty"`
	// StoreError is why the recorder could not grow the spool (its file
	// system's error, e.g. "no space left on device (errno 28)").
	StoreError string `json:"store_error,omitempty"`
	// InvalidChunks are spool chunks abandoned at a malformed record (a
	// damaged spool): the records after it in that chunk are lost, uncounted.
	InvalidChunks uint64 `json:"invalid_chunks,omitempty"`
	// PerfettoCapped records were left out of the Perfetto trace at its
	// --perfetto-buffer-size (they are in every other output).
	PerfettoCapped uint64 `json:"perfetto_capped,omitempty"`
	// PCSamplesLost are host-trap PC samples the runtime reported lost
	// (its sampling buffers were full).
	PCSamplesLost uint64 `json:"pc_samples_lost,omitempty"`
}

// DomainLoss is one process's requested domains that were not collected,
// and why.
type DomainLoss struct {
	PID     int      `json:"pid"`
	Domains []string `json:"domains"` // option names, e.g. "kernel_trace", "pmc"
	Reason  string   `json:"reason"`
}

// TruncatedNames is how many records of a process hold a name or message
// the recorder cut to fit its largest record (~64 KiB).
type TruncatedNames struct {
	PID   int    `json:"pid"`
	Count uint64 `json:"count"`
}
