package summary

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// PCKernel is one kernel's PC samples: how many, and its hottest
// instructions (the most sampled first).
type PCKernel struct {
	Kernel  string `json:"kernel"`
	Method  string `json:"method"` // host_trap or stochastic
	Samples int64  `json:"samples"`
	// Instructions are the top N (Options.TopInstructions) by samples.
	Instructions []HotInstruction `json:"instructions"`
}

// HotInstruction is one sampled instruction of a kernel.
type HotInstruction struct {
	// Offset is the PC's offset in its code object; HasOffset is false
	// for CSV inputs (pc_sampling_*.csv has no PC: the instruction text
	// is the key there) and for a PC in no known code object (Offset is
	// then the PC).
	Offset      uint64  `json:"offset"`
	HasOffset   bool    `json:"has_offset"`
	Instruction string  `json:"instruction"`
	Comment     string  `json:"comment,omitempty"`
	Samples     int64   `json:"samples"`
	Percent     float64 `json:"percent"` // of the kernel's samples
	// Stalls are, for stochastic samples, the reasons the wave issued
	// nothing at this PC, the most frequent first (at most 3), with their
	// share of the instruction's samples that issued nothing.
	Stalls []Stall `json:"stalls,omitempty"`
}

// Stall is one not-issued reason's count.
type Stall struct {
	Reason  string  `json:"reason"`
	Samples int64   `json:"samples"`
	Percent float64 `json:"percent"`
}

// stallReasonPrefix starts rocprofv3's names of not-issued reasons;
// the tables print the rest (WAITCNT, ...).
const stallReasonPrefix = "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_"

type pcKey struct {
	kernel    string
	known     bool // in a code object: offset is an offset
	hasOffset bool
	offset    uint64
	text      string
}

type pcCount struct {
	samples, notIssued int64
	comment            string
	stalls             map[string]int64
}

type pcAccum struct {
	counts  map[pcKey]*pcCount
	kernels map[string]int64
	method  map[string]string
}

func (a *pcAccum) add(k pcKey, method, comment string, notIssued bool, stall string) {
	k.kernel = model.ValidString(k.kernel)
	c := a.counts[k]
	if c == nil {
		c = &pcCount{comment: comment}
		a.counts[k] = c
	}
	c.samples++
	a.kernels[k.kernel]++
	if a.method[k.kernel] == "" || method == "stochastic" {
		a.method[k.kernel] = method
	}
	if notIssued && stall != "" {
		if c.stalls == nil {
			c.stalls = map[string]int64{}
		}
		c.notIssued++
		c.stalls[strings.TrimPrefix(stall, stallReasonPrefix)]++
	}
}

func newPCAccum() *pcAccum {
	return &pcAccum{counts: map[pcKey]*pcCount{}, kernels: map[string]int64{}, method: map[string]string{}}
}

// pcProcessOf gives the accumulator of a process's own samples (--by-rank),
// nil when only the whole run's are counted. input is the input's index
// in Build's list; p identifies the process as analysis.ScanSource does
// (its Key), so a process's samples meet its events' tables.
type pcProcessOf func(input int, p *analysis.Process) *pcAccum

// pcSampleRows reads the inputs' PC samples (ROCpd databases; the
// pc_sampling_host_trap.csv and pc_sampling_stochastic.csv beside a CSV
// run's kernel_trace.csv) into the whole run's accumulator, and each
// sample into its process's too when perProcess is set.
func pcSampleRows(inputs []string, perProcess pcProcessOf) (*pcAccum, error) {
	a := newPCAccum()
	for i, in := range inputs {
		src, err := analysis.Resolve(in)
		if err != nil {
			return nil, err
		}
		var per func(p *analysis.Process) *pcAccum
		if perProcess != nil {
			per = func(p *analysis.Process) *pcAccum { return perProcess(i, p) }
		}
		for _, p := range src.Databases {
			if err := readPCDatabase(p, a, per); err != nil {
				return nil, err
			}
		}
		for _, f := range src.CSVFiles {
			if prefix, ok := strings.CutSuffix(f, "kernel_trace.csv"); ok {
				var pa *pcAccum
				if per != nil && hasPCCSV(prefix) {
					pa = per(csvProcess(src, f))
				}
				if err := readPCCSV(prefix, a, pa); err != nil {
					return nil, err
				}
			}
		}
	}
	return a, nil
}

// hottest returns each kernel's top most sampled instructions, kernels
// with the most samples first.
func (a *pcAccum) hottest(top int) []PCKernel {
	byKernel := map[string][]HotInstruction{}
	for k, c := range a.counts {
		h := HotInstruction{Offset: k.offset, HasOffset: k.hasOffset && k.known, Instruction: k.text,
			Comment: c.comment, Samples: c.samples, Percent: 100 * float64(c.samples) / float64(a.kernels[k.kernel])}
		if !k.known && k.hasOffset && h.Instruction == "" {
			h.Instruction = fmt.Sprintf("(PC %#x in no known code object)", k.offset)
		}
		for r, n := range c.stalls {
			h.Stalls = append(h.Stalls, Stall{Reason: r, Samples: n, Percent: 100 * float64(n) / float64(c.notIssued)})
		}
		sort.Slice(h.Stalls, func(i, j int) bool {
			if h.Stalls[i].Samples != h.Stalls[j].Samples {
				return h.Stalls[i].Samples > h.Stalls[j].Samples
			}
			return h.Stalls[i].Reason < h.Stalls[j].Reason
		})
		h.Stalls = h.Stalls[:min(3, len(h.Stalls))]
		byKernel[k.kernel] = append(byKernel[k.kernel], h)
	}
	out := make([]PCKernel, 0, len(byKernel))
	for name, hs := range byKernel {
		sort.Slice(hs, func(i, j int) bool {
			a, b := hs[i], hs[j]
			switch {
			case a.Samples != b.Samples:
				return a.Samples > b.Samples
			case a.HasOffset != b.HasOffset:
				return a.HasOffset
			case a.Offset != b.Offset:
				return a.Offset < b.Offset
			}
			return a.Instruction < b.Instruction
		})
		out = append(out, PCKernel{Kernel: name, Method: a.method[name], Samples: a.kernels[name],
			Instructions: hs[:min(top, len(hs))]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Kernel < out[j].Kernel
	})
	return out
}

// errFirstEvent stops a scan at its first event.
var errFirstEvent = errors.New("first event")

// csvProcess is the process of a CSV run's kernel_trace.csv as
// analysis.ScanSource names it (kernel_trace.csv has no Process_Id
// column: the pid is the file name's "<pid>_" prefix, else the prefix is
// the process), read from the file's first row by the scanner itself so
// that the keys cannot drift apart. The PC-sample files beside it are that
// process's samples.
func csvProcess(src *analysis.Source, kernelTrace string) *analysis.Process {
	root := src.Path
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		root = filepath.Dir(root)
	}
	rel, err := filepath.Rel(root, kernelTrace)
	if err != nil {
		rel = kernelTrace
	}
	var p *analysis.Process
	err = analysis.ScanCSVFile(kernelTrace, rel, func(ev *analysis.Event) error {
		cp := *ev.Process
		p = &cp
		return errFirstEvent
	})
	if p == nil || (err != nil && !errors.Is(err, errFirstEvent)) {
		// No dispatch row (or an unreadable file, which readPCCSV
		// reports): the samples name no kernel but still their prefix.
		p = &analysis.Process{Key: strings.TrimSuffix(rel, "kernel_trace.csv"), Rank: -1}
	}
	return p
}

// hasPCCSV reports whether a CSV output prefix has PC-sample files.
func hasPCCSV(prefix string) bool {
	for _, m := range []string{"host_trap", "stochastic"} {
		if st, err := os.Stat(prefix + "pc_sampling_" + m + ".csv"); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// readPCDatabase adds a database's PC samples, each to its dispatch's
// kernel, in the whole run's accumulator and, when per is set, in its
// process's (the process of the sample's track).
func readPCDatabase(path string, a *pcAccum, per func(p *analysis.Process) *pcAccum) error {
	db, err := rocpdread.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	type dk struct {
		guid     string
		pid, dis int64
	}
	var kernels map[dk]string
	type pk struct {
		guid string
		pid  int64
	}
	procs := map[pk]*pcAccum{}
	return db.PCSamples(func(in *rocpdread.Info, s *rocpdread.PCSample) error {
		if kernels == nil {
			// The dispatches' kernels, once there are samples.
			kernels = map[dk]string{}
			err := db.Dispatches(func(in *rocpdread.Info, d *rocpdread.Dispatch) error {
				kernels[dk{in.Image.GUID, d.PID, d.DispatchID}] = in.Symbol(d.KernelID).Name()
				return nil
			})
			if err != nil {
				return err
			}
		}
		kernel, ok := kernels[dk{in.Image.GUID, s.PID, int64(s.DispatchID)}]
		if !ok {
			kernel = "dispatch " + strconv.FormatUint(s.DispatchID, 10)
		}
		method := "host_trap"
		if s.Category == rocpdread.PCSampleCategories[1] {
			method = "stochastic"
		}
		known := s.CodeObjectID != 0
		k := pcKey{kernel: kernel, known: known, hasOffset: true, offset: s.Offset, text: s.Instruction}
		notIssued := s.WaveIssued != nil && !*s.WaveIssued
		a.add(k, method, s.Comment, notIssued, s.StallReason)
		if per != nil {
			pa, ok := procs[pk{in.Image.GUID, s.PID}]
			if !ok {
				pa = per(analysis.DBProcess(in, s.PID))
				procs[pk{in.Image.GUID, s.PID}] = pa
			}
			pa.add(k, method, s.Comment, notIssued, s.StallReason)
		}
		return nil
	})
}

// readPCCSV adds the PC samples of one CSV output prefix, each to the
// kernel kernel_trace.csv gives its Dispatch_Id. The CSV has no PC: an
// instruction is its text (with its comment when there is no text: the
// unrecognised code object's PC). per, when set, is the prefix's
// process's accumulator: it counts the samples too.
func readPCCSV(prefix string, a, per *pcAccum) error {
	var kernels map[string]string
	for _, m := range []string{"host_trap", "stochastic"} {
		path := prefix + "pc_sampling_" + m + ".csv"
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if kernels == nil {
			var err error
			if kernels, err = csvDispatchKernels(prefix + "kernel_trace.csv"); err != nil {
				return err
			}
		}
		err := eachCSVRow(path, "Instruction", func(col map[string]int, rec []string) error {
			cell := func(name string) string {
				if i, ok := col[name]; ok {
					return rec[i]
				}
				return ""
			}
			d := cell("Dispatch_Id")
			kernel, ok := kernels[d]
			if !ok {
				kernel = "dispatch " + d
			}
			text, comment := cell("Instruction"), cell("Instruction_Comment")
			k := pcKey{kernel: kernel, known: true, text: text}
			if text == "" && strings.HasPrefix(comment, "Unrecognized code object id") {
				// The PC closes the comment: the offset of an unknown PC.
				i := strings.LastIndexByte(comment, ':')
				if v, err := strconv.ParseUint(comment[i+1:], 10, 64); err == nil && i >= 0 {
					k.known, k.hasOffset, k.offset = false, true, v
				}
			}
			issued := cell("Wave_Issued_Instruction")
			notIssued := m == "stochastic" && (issued == "0" || issued == "false")
			a.add(k, m, comment, notIssued, cell("Stall_Reason"))
			if per != nil {
				per.add(k, m, comment, notIssued, cell("Stall_Reason"))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// csvDispatchKernels maps a kernel_trace.csv's Dispatch_Id to Kernel_Name.
func csvDispatchKernels(path string) (map[string]string, error) {
	out := map[string]string{}
	err := eachCSVRow(path, "Kernel_Name", func(col map[string]int, rec []string) error {
		d, okD := col["Dispatch_Id"]
		k, okK := col["Kernel_Name"]
		if !okD || !okK {
			return fmt.Errorf("%s: not a kernel_trace.csv (no Dispatch_Id and Kernel_Name columns)", path)
		}
		out[rec[d]] = rec[k]
		return nil
	})
	return out, err
}

// eachCSVRow reads a rocprofv3 CSV file row by row; free names the column
// that may hold any text.
func eachCSVRow(path, free string, fn func(col map[string]int, rec []string) error) error {
	f, err := atomicfile.OpenInput(path) // a FIFO is refused, not waited on
	if err != nil {
		return err
	}
	defer f.Close()
	r := analysis.NewCSVReader(f)
	head, err := r.Header()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	freeCol, ok := col[free]
	if !ok {
		return fmt.Errorf("%s: no %s column", path, free)
	}
	for line := 2; ; line++ {
		rec, err := r.Row(len(head), freeCol)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) != len(head) {
			return fmt.Errorf("%s line %d: %d fields, header has %d", path, line, len(rec), len(head))
		}
		if err := fn(col, rec); err != nil {
			return err
		}
	}
}
