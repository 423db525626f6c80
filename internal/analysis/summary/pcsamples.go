package summary

import (
	"fmt"
	"io"
	"os"
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

// pcSampleRows reads the inputs' PC samples (ROCpd databases; the
// pc_sampling_host_trap.csv and pc_sampling_stochastic.csv beside a CSV
// run's kernel_trace.csv) and returns each kernel's hottest instructions,
// kernels with the most samples first.
func pcSampleRows(inputs []string, top int) ([]PCKernel, error) {
	a := &pcAccum{counts: map[pcKey]*pcCount{}, kernels: map[string]int64{}, method: map[string]string{}}
	for _, in := range inputs {
		src, err := analysis.Resolve(in)
		if err != nil {
			return nil, err
		}
		for _, p := range src.Databases {
			if err := readPCDatabase(p, a); err != nil {
				return nil, err
			}
		}
		for _, f := range src.CSVFiles {
			if prefix, ok := strings.CutSuffix(f, "kernel_trace.csv"); ok {
				if err := readPCCSV(prefix, a); err != nil {
					return nil, err
				}
			}
		}
	}
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
	return out, nil
}

// readPCDatabase adds a database's PC samples, each to its dispatch's
// kernel.
func readPCDatabase(path string, a *pcAccum) error {
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
		a.add(k, method, s.Comment, s.WaveIssued != nil && !*s.WaveIssued, s.StallReason)
		return nil
	})
}

// readPCCSV adds the PC samples of one CSV output prefix, each to the
// kernel kernel_trace.csv gives its Dispatch_Id. The CSV has no PC: an
// instruction is its text (with its comment when there is no text: the
// unrecognised code object's PC).
func readPCCSV(prefix string, a *pcAccum) error {
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
