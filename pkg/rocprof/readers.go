package rocprof

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Kernel is one kernel dispatch read back from a run's kernel_trace.csv files.
type Kernel struct {
	Agent         string
	QueueID       uint64
	StreamID      uint64
	ThreadID      uint64
	DispatchID    uint64
	KernelID      uint64
	Name          string
	CorrelationID uint64
	StartNs       uint64
	EndNs         uint64
	Grid          [3]uint64
	Workgroup     [3]uint64
	LDS, Scratch  uint64
	VGPR, AGPR    uint64
	SGPR          uint64
}

// DurationNs is the dispatch's duration.
func (k Kernel) DurationNs() uint64 { return k.EndNs - k.StartNs }

// ReadKernels loads every kernel dispatch of a run from the kernel_trace.csv
// files its manifest lists (run with -f csv and --kernel-trace). dir is the
// directory holding run.json.
func ReadKernels(dir string, m *Manifest) ([]Kernel, error) {
	var out []Kernel
	for _, f := range m.Files {
		if f.Format != "csv" || f.Domain != "KERNEL_DISPATCH" || filepath.Ext(f.Path) != ".csv" ||
			!hasSuffix(f.Path, "kernel_trace.csv") {
			continue
		}
		ks, err := readKernelCSV(filepath.Join(dir, f.Path))
		if err != nil {
			return nil, err
		}
		if int64(len(ks)) != f.Records {
			return nil, fmt.Errorf("%s holds %d dispatches but run.json says %d", f.Path, len(ks), f.Records)
		}
		out = append(out, ks...)
	}
	return out, nil
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

func readKernelCSV(path string) ([]Kernel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.LazyQuotes = true // rocprofv3 does not escape quotes inside kernel names
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"Kernel_Name", "Start_Timestamp", "End_Timestamp", "Dispatch_Id"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: no %s column: not a kernel_trace.csv", path, need)
		}
	}
	var out []Kernel
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		u := func(name string) uint64 {
			i, ok := col[name]
			if !ok || i >= len(rec) {
				return 0
			}
			v, _ := strconv.ParseUint(rec[i], 10, 64)
			return v
		}
		s := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		out = append(out, Kernel{
			Agent: s("Agent_Id"), QueueID: u("Queue_Id"), StreamID: u("Stream_Id"), ThreadID: u("Thread_Id"),
			DispatchID: u("Dispatch_Id"), KernelID: u("Kernel_Id"), Name: s("Kernel_Name"),
			CorrelationID: u("Correlation_Id"), StartNs: u("Start_Timestamp"), EndNs: u("End_Timestamp"),
			Grid:      [3]uint64{u("Grid_Size_X"), u("Grid_Size_Y"), u("Grid_Size_Z")},
			Workgroup: [3]uint64{u("Workgroup_Size_X"), u("Workgroup_Size_Y"), u("Workgroup_Size_Z")},
			LDS:       u("LDS_Block_Size"), Scratch: u("Scratch_Size"),
			VGPR: u("VGPR_Count"), AGPR: u("Accum_VGPR_Count"), SGPR: u("SGPR_Count"),
		})
	}
}
