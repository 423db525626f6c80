package convert

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpd"
)

// Options are the naming options rocprofv3 applies when it writes CSV.
type Options struct {
	// AgentIndex is "absolute", "relative" (default) or "type-relative".
	AgentIndex string
	// MangledKernels prints kernel_name (the raw symbol) instead of the
	// display name; KernelRename prints the ROCTx region text when a
	// dispatch has one.
	MangledKernels bool
	KernelRename   bool
}

// Written lists the files a conversion wrote, with their row counts.
type Written struct {
	Path string
	Rows int64
}

// csvFile is one output CSV, created on its first row: a domain without
// records gets no file, as rocprofv3 writes no header-only files.
type csvFile struct {
	path   string
	header []string
	f      *os.File
	w      *bufio.Writer
	rows   int64
}

// cell kinds: rocprofv3 quotes strings and prints numbers bare.
type cell struct {
	s     string
	quote bool
}

func str(s string) cell  { return cell{s, true} }
func num(v int64) cell   { return cell{strconv.FormatInt(v, 10), false} }
func unum(v int64) cell  { return cell{strconv.FormatUint(uint64(v), 10), false} }
func dbl(v float64) cell { return cell{formatDouble(v), false} }

// formatDouble prints a counter value as rocprofv3's trace CSVs do: fixed
// with 6 decimals from 1 up, scientific with 8 digits below.
func formatDouble(v float64) string {
	if v >= 1 {
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	s := strconv.FormatFloat(v, 'e', 8, 64)
	// Go prints a two-digit exponent already; C++ streams do the same.
	return s
}

func (c *csvFile) write(cells ...cell) error {
	if c.f == nil {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			return err
		}
		f, err := os.Create(c.path)
		if err != nil {
			return err
		}
		c.f, c.w = f, bufio.NewWriterSize(f, 1<<16)
		hs := make([]cell, len(c.header))
		for i, h := range c.header {
			hs[i] = str(h)
		}
		c.line(hs)
	}
	c.rows++
	c.line(cells)
	return nil
}

func (c *csvFile) line(cells []cell) {
	for i, x := range cells {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if x.quote {
			// rocprofv3 does not escape quotes inside strings.
			c.w.WriteByte('"')
			c.w.WriteString(x.s)
			c.w.WriteByte('"')
		} else {
			c.w.WriteString(x.s)
		}
	}
	c.w.WriteByte('\n')
}

func (c *csvFile) close() error {
	if c.f == nil {
		return nil
	}
	err := c.w.Flush()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Column lists of the trace files (output-formats.md §4).
var (
	kernelHeader = []string{"Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
		"Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size",
		"VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
		"Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}
	apiHeader     = []string{"Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}
	copyHeader    = []string{"Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}
	allocHeader   = []string{"Kind", "Operation", "Agent_Id", "Allocation_Size", "Address", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}
	scratchHeader = []string{"Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id", "Alloc_Flags", "Start_Timestamp", "End_Timestamp", "Allocation_Size"}
	counterHeader = []string{"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id", "Grid_Size",
		"Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count",
		"SGPR_Count", "Counter_Name", "Counter_Value", "Start_Timestamp", "End_Timestamp"}
)

// apiFile names the API trace file of a region's domain.
var apiFile = map[analysis.Domain]string{
	analysis.HIP: "hip_api_trace", analysis.HSA: "hsa_api_trace", analysis.Marker: "marker_api_trace",
	analysis.RCCL: "rccl_api_trace", analysis.ROCDecode: "rocdecode_api_trace", analysis.ROCJPEG: "rocjpeg_api_trace",
}

// CSV writes the trace CSV files of every database into prefix + "_" +
// <name>.csv (prefix is "<dir>/<file>"). Several databases, or a merged one,
// go into the same files, one process after another.
func CSV(prefix string, dbs []*rocpd.DB, opt Options) ([]Written, error) {
	files := map[string]*csvFile{}
	var order []string
	file := func(name string, header []string) *csvFile {
		f := files[name]
		if f == nil {
			f = &csvFile{path: prefix + "_" + name + ".csv", header: header}
			files[name] = f
			order = append(order, name)
		}
		return f
	}
	err := func() error {
		for _, db := range dbs {
			if err := writeDB(db, file, opt); err != nil {
				return err
			}
		}
		return nil
	}()
	var out []Written
	for _, name := range order {
		f := files[name]
		if cerr := f.close(); err == nil {
			err = cerr
		}
		if f.rows > 0 {
			out = append(out, Written{Path: f.path, Rows: f.rows})
		}
	}
	return out, err
}

type labeler struct {
	opt Options
	in  *rocpd.Info
}

// agent returns rocprofv3's agent label: "Agent <n>", or "<CPU|GPU> <n>"
// with type-relative indices.
func (l labeler) agent(id int64) string {
	a, ok := l.in.Agents[id]
	if !ok {
		return "Agent " + strconv.FormatInt(id, 10)
	}
	switch l.opt.AgentIndex {
	case "absolute":
		return "Agent " + strconv.FormatInt(a.Absolute, 10)
	case "type-relative":
		return a.Type + " " + strconv.FormatInt(a.TypeIndex, 10)
	}
	return "Agent " + strconv.FormatInt(a.Logical, 10)
}

func (l labeler) kernelName(d *rocpd.Dispatch) string {
	if l.opt.KernelRename {
		if r := l.in.String(d.RegionNameID); r != "" {
			return r
		}
	}
	s := l.in.Symbol(d.KernelID)
	if l.opt.MangledKernels && s.KernelName != "" {
		return s.KernelName
	}
	return s.Name()
}

// ldsBlock rounds a kernel's static LDS size up to the 512-byte blocks
// rocprofv3 reports.
func ldsBlock(n int64) int64 { return (n + 511) / 512 * 512 }

func writeDB(db *rocpd.DB, file func(string, []string) *csvFile, opt Options) error {
	err := db.Dispatches(func(in *rocpd.Info, d *rocpd.Dispatch) error {
		l := labeler{opt, in}
		s := in.Symbol(d.KernelID)
		return file("kernel_trace", kernelHeader).write(str("KERNEL_DISPATCH"), str(l.agent(d.AgentID)),
			num(d.QueueID), num(d.StreamID), num(in.TID(d.TID)), num(d.DispatchID), num(d.KernelID),
			str(l.kernelName(d)), num(d.CorrelationID), unum(d.Start), unum(d.End), num(ldsBlock(s.GroupSegmentSize)),
			num(d.PrivateSegmentSize), num(s.ArchVGPRCount), num(s.AccumVGPRCount), num(s.SGPRCount),
			num(d.Workgroup[0]), num(d.Workgroup[1]), num(d.Workgroup[2]), num(d.Grid[0]), num(d.Grid[1]), num(d.Grid[2]))
	})
	if err != nil {
		return err
	}
	err = db.Regions(func(in *rocpd.Info, g *rocpd.Region) error {
		dom := analysis.CategoryDomain(g.Category)
		name, ok := apiFile[dom]
		if !ok {
			return nil
		}
		fn := g.Name
		if dom == analysis.Marker && g.Message != "" {
			fn = g.Message
		}
		return file(name, apiHeader).write(str(g.Category), str(fn), num(in.PID(g.PID)), num(in.TID(g.TID)),
			num(g.CorrelationID), unum(g.Start), unum(g.End))
	})
	if err != nil {
		return err
	}
	err = db.Copies(func(in *rocpd.Info, c *rocpd.Copy) error {
		l := labeler{opt, in}
		return file("memory_copy_trace", copyHeader).write(str("MEMORY_COPY"), str(c.Direction), num(c.StreamID),
			str(l.agent(c.SrcAgent)), str(l.agent(c.DstAgent)), num(c.CorrelationID), unum(c.Start), unum(c.End))
	})
	if err != nil {
		return err
	}
	err = db.Allocations(func(in *rocpd.Info, a *rocpd.Allocation) error {
		l := labeler{opt, in}
		op := analysis.AllocOperation(a.Type, a.Level)
		agent := ""
		if a.HasAgent && a.Type == "ALLOC" {
			agent = l.agent(a.AgentID)
		}
		if a.Level == "SCRATCH" {
			return file("scratch_memory_trace", scratchHeader).write(str("SCRATCH_MEMORY"), str(op), str(agent),
				num(a.QueueID), num(in.TID(a.TID)), num(a.Flags), unum(a.Start), unum(a.End), num(a.Size))
		}
		return file("memory_allocation_trace", allocHeader).write(str("MEMORY_ALLOCATION"), str(op), str(agent),
			num(a.Size), str(fmt.Sprintf("0x%016x", uint64(a.Address))), num(a.CorrelationID), unum(a.Start), unum(a.End))
	})
	if err != nil {
		return err
	}
	return db.CounterSums(func(in *rocpd.Info, d *rocpd.Dispatch, counter string, v float64) error {
		l := labeler{opt, in}
		s := in.Symbol(d.KernelID)
		if math.IsNaN(v) {
			v = 0
		}
		return file("counter_collection", counterHeader).write(num(d.CorrelationID), num(d.DispatchID),
			str(l.agent(d.AgentID)), num(d.QueueID), num(in.PID(d.PID)), num(in.TID(d.TID)),
			num(d.Grid[0]*d.Grid[1]*d.Grid[2]), num(d.KernelID), str(l.kernelName(d)),
			num(d.Workgroup[0]*d.Workgroup[1]*d.Workgroup[2]), num(ldsBlock(s.GroupSegmentSize)),
			num(d.PrivateSegmentSize), num(s.ArchVGPRCount), num(s.AccumVGPRCount), num(s.SGPRCount),
			str(counter), dbl(v), unum(d.Start), unum(d.End))
	})
}

// FileNames returns the CSV base names convert can write, for help texts.
func FileNames() string {
	return strings.Join([]string{"kernel_trace", "hip_api_trace", "hsa_api_trace", "marker_api_trace",
		"memory_copy_trace", "memory_allocation_trace", "scratch_memory_trace", "counter_collection",
		"rccl_api_trace", "rocdecode_api_trace", "rocjpeg_api_trace"}, ", ")
}
