package rocprof

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// Kernel is one kernel dispatch read back from a run's ROCpd database or
// kernel_trace.csv files.
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

// ReadKernels loads every kernel dispatch of a run from the files its
// manifest lists: the ROCpd databases (the default format) when it wrote
// any, else the kernel_trace.csv files (-f csv). dir is the directory
// holding run.json. A run that wrote neither (no --kernel-trace, or only
// JSON, Perfetto, OTF2 or Parquet) is an error.
func ReadKernels(dir string, m *Manifest) ([]Kernel, error) {
	var out []Kernel
	var dbs, csvs int
	for _, f := range m.Files {
		if format.ROCpd.Is(f.Format) && filepath.Ext(f.Path) == ".db" {
			dbs++
		}
	}
	for _, f := range m.Files {
		switch {
		case dbs > 0 && format.ROCpd.Is(f.Format) && filepath.Ext(f.Path) == ".db":
			ks, err := readKernelDB(filepath.Join(dir, f.Path))
			if err != nil {
				return nil, err
			}
			out = append(out, ks...)
		case dbs == 0 && f.Format == "csv" && f.Domain == "KERNEL_DISPATCH" && hasSuffix(f.Path, "kernel_trace.csv"):
			csvs++
			ks, err := readKernelCSV(filepath.Join(dir, f.Path))
			if err != nil {
				return nil, err
			}
			if int64(len(ks)) != f.Records {
				return nil, fmt.Errorf("%s holds %d dispatches but run.json says %d", f.Path, len(ks), f.Records)
			}
			out = append(out, ks...)
		}
	}
	if dbs == 0 && csvs == 0 {
		return nil, fmt.Errorf("the run in %s wrote no kernel trace rocprof.ReadKernels reads (a ROCpd database or kernel_trace.csv): "+
			"run with --kernel-trace and -f rocpd (the default) or -f csv", dir)
	}
	return out, nil
}

// readKernelDB reads the dispatches of a ROCpd database.
func readKernelDB(path string) ([]Kernel, error) {
	db, err := rocpdread.Open(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out []Kernel
	err = db.Dispatches(func(in *rocpdread.Info, d *rocpdread.Dispatch) error {
		k := in.Symbol(d.KernelID)
		agent := ""
		if a := in.Agents[d.AgentID]; a != nil {
			agent = fmt.Sprintf("Agent %d", a.Absolute)
		}
		out = append(out, Kernel{Agent: agent, QueueID: uint64(d.QueueID), StreamID: uint64(d.StreamID),
			ThreadID: uint64(in.TID(d.TID)), DispatchID: uint64(d.DispatchID), KernelID: uint64(d.KernelID),
			Name: k.Name(), CorrelationID: uint64(d.CorrelationID), StartNs: uint64(d.Start), EndNs: uint64(d.End),
			Grid:      [3]uint64{uint64(d.Grid[0]), uint64(d.Grid[1]), uint64(d.Grid[2])},
			Workgroup: [3]uint64{uint64(d.Workgroup[0]), uint64(d.Workgroup[1]), uint64(d.Workgroup[2])},
			LDS:       uint64(analysis.LDSBlock(k.GroupSegmentSize)), Scratch: uint64(d.PrivateSegmentSize),
			VGPR: uint64(k.ArchVGPRCount), AGPR: uint64(k.AccumVGPRCount), SGPR: uint64(k.SGPRCount)})
		return nil
	})
	return out, err
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
