package att

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/ianlancetaylor/demangle"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// Version is the version string written into the decoded JSON files.
const Version = "3.0.0"

// codeHeader is code.json's "header".
const codeHeader = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"

// codeLine is one instruction's aggregate over every traced wave.
type codeLine struct {
	pc                        PC
	line                      Line
	number                    int
	hit, latency, stall, idle int64
	kernel                    *Symbol // a kernel (function) starts here
}

// Dispatch is one traced dispatch's decoded data, ready to be written.
type Dispatch struct {
	Dir      string // the ui_output_agent_<agent>_dispatch_<id> directory
	Counters []string
	SEs      []*SETrace
	Code     *CodeObjects
	// Rows is how many rows code.json and the stats CSV got (set by Write).
	Rows int
}

// Write writes the dispatch's directory (code.json, filenames.json,
// occupancy.json, one se<SE>_sm<SIMD>_sl<slot>_wv<n>.json per wave,
// wstates<state>.json, se<SE>_perfcounter.json) and, next to it,
// stats_<dir name>.csv.
//
// Both are written into a private temporary directory beside them
// (internal/atomicfile's Stage) and renamed into place only when every
// file was written: a failure (a full disk) leaves neither, and a symlink
// planted at either name is replaced, never followed. Errors name the
// final paths.
func (d *Dispatch) Write() error {
	parent, base := filepath.Dir(d.Dir), filepath.Base(d.Dir)
	if err := atomicfile.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	stage, err := atomicfile.NewStage(parent)
	if err != nil {
		return err
	}
	defer stage.Abort()
	staged := filepath.Join(stage.Dir(), base)
	if err := os.Mkdir(staged, 0o755); err != nil {
		return err
	}
	var errs []error
	// write puts one file into the staged directory; its error names the
	// file's final path.
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(staged, name), data, 0o644); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = &os.PathError{Op: pe.Op, Path: filepath.Join(d.Dir, name), Err: pe.Err}
			}
			errs = append(errs, err)
		}
	}
	put := func(name string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			errs = append(errs, err)
			return
		}
		write(name, data)
	}

	lines := map[PC]*codeLine{}
	byRaw := map[PC]*codeLine{} // the decoder's PC, before normalisation
	var order []*codeLine
	number := 0
	lineFor := func(raw PC) *codeLine {
		if l, ok := byRaw[raw]; ok {
			return l
		}
		pc := raw
		if d.Code != nil {
			pc = d.Code.Normalize(raw)
		}
		if l, ok := lines[pc]; ok {
			byRaw[raw] = l
			return l
		}
		l := &codeLine{pc: pc}
		if d.Code != nil {
			if sym, ok := d.Code.SymbolAt(pc); ok {
				l.kernel = &sym
				number++ // the kernel's name line comes first
			}
			if isa, err := d.Code.Instruction(pc); err == nil {
				l.line = isa
			}
		}
		if l.line.Text == "" {
			l.line.Text = fmt.Sprintf("; unknown instruction at 0x%x", raw.Addr)
		}
		number++
		l.number = number
		lines[pc] = l
		byRaw[raw] = l
		order = append(order, l)
		return l
	}

	gfxip := 9
	var stateEvents [5][][2]int64 // per state: (time, +1/-1)
	waveNames := map[string]map[string]map[string]map[string][3]any{}
	occupancy := map[string]any{}
	kernelIDs := map[PC]int{{}: 0}
	var kernelOrder = []PC{{}}
	for _, se := range d.SEs {
		if se.GFXIP != 0 {
			gfxip = se.GFXIP
		}
		seKey := strconv.Itoa(se.SE)
		if len(se.Occupancy) > 0 {
			var list [][6]any
			for _, o := range se.Occupancy {
				pc := o.PC
				if d.Code != nil {
					pc = d.Code.Normalize(pc)
				}
				id, ok := kernelIDs[pc]
				if !ok {
					id = len(kernelOrder)
					kernelIDs[pc] = id
					kernelOrder = append(kernelOrder, pc)
				}
				list = append(list, [6]any{o.Time, o.CU, o.SIMD, o.WaveID, b2i(o.Start), id})
			}
			occupancy[seKey] = list
		}
		if len(se.Perf) > 0 {
			data := make([][7]any, 0, len(se.Perf))
			for _, p := range se.Perf {
				data = append(data, [7]any{p.Time, p.Events[0], p.Events[1], p.Events[2], p.Events[3], p.CU, p.Bank})
			}
			put(fmt.Sprintf("se%d_perfcounter.json", se.SE), map[string]any{"data": data})
		}
		ids := map[[2]uint8]int{}
		for _, w := range se.Waves {
			prev := w.Begin
			// [[time, category, stall, duration, line], ...], encoded by hand:
			// waves hold most of a trace's records.
			insts := make([]byte, 0, 32*len(w.Insts)+2)
			insts = append(insts, '[')
			for k, in := range w.Insts {
				l := lineFor(in.PC)
				l.hit++
				l.latency += int64(in.Duration)
				l.stall += int64(in.Stall)
				if gap := in.Time - prev; gap > 0 {
					l.idle += gap
				}
				prev = max(prev, in.Time+int64(in.Duration))
				if k > 0 {
					insts = append(insts, ',')
				}
				insts = append(insts, '[')
				insts = strconv.AppendInt(insts, in.Time, 10)
				insts = append(insts, ',')
				insts = strconv.AppendUint(insts, uint64(in.Category), 10)
				insts = append(insts, ',')
				insts = strconv.AppendUint(insts, uint64(in.Stall), 10)
				insts = append(insts, ',')
				insts = strconv.AppendInt(insts, int64(in.Duration), 10)
				insts = append(insts, ',')
				insts = strconv.AppendInt(insts, int64(l.number), 10)
				insts = append(insts, ']')
			}
			insts = append(insts, ']')
			acc := w.Begin
			timeline := make([]byte, 0, 12*len(w.Timeline)+2)
			timeline = append(timeline, '[')
			for k, st := range w.Timeline {
				if st.Type >= 0 && int(st.Type) < len(stateEvents) {
					stateEvents[st.Type] = append(stateEvents[st.Type], [2]int64{acc, 1}, [2]int64{acc + int64(st.Duration), -1})
				}
				if k > 0 {
					timeline = append(timeline, ',')
				}
				timeline = fmt.Appendf(timeline, "[%d,%d]", st.Type, st.Duration)
				acc += int64(st.Duration)
			}
			timeline = append(timeline, ']')
			if len(w.Insts) == 0 && len(w.Timeline) < 3 {
				continue
			}
			key := [2]uint8{w.SIMD, w.WaveID}
			n := ids[key]
			ids[key] = n + 1
			name := fmt.Sprintf("se%d_sm%d_sl%d_wv%d.json", se.SE, w.SIMD, w.WaveID, n)
			// Written by hand (keys in encoding/json's sorted order): waves
			// hold most of a trace's records.
			doc := make([]byte, 0, len(insts)+len(timeline)+256)
			doc = fmt.Appendf(doc, `{"duration":%d,"name":"SE%d","num_insts":%d,"num_stitched":%d,"wave":{"begin":%d,"cu":%d,"end":%d,"id":%d,"instructions":`,
				w.End-w.Begin, se.SE, len(w.Insts), len(w.Insts), w.Begin, w.CU, w.End, n)
			doc = append(doc, insts...)
			doc = fmt.Appendf(doc, `,"simd":%d,"slot":%d,"timeline":`, w.SIMD, w.WaveID)
			doc = append(doc, timeline...)
			doc = append(doc, `,"waitcnt":[]}}`...)
			write(name, doc)
			simd, slot := strconv.Itoa(int(w.SIMD)), strconv.Itoa(int(w.WaveID))
			if waveNames[seKey] == nil {
				waveNames[seKey] = map[string]map[string]map[string][3]any{}
			}
			if waveNames[seKey][simd] == nil {
				waveNames[seKey][simd] = map[string]map[string][3]any{}
			}
			if waveNames[seKey][simd][slot] == nil {
				waveNames[seKey][simd][slot] = map[string][3]any{}
			}
			waveNames[seKey][simd][slot][strconv.Itoa(n)] = [3]any{name, w.Begin, w.End}
		}
	}

	// wstates<N>.json: how many traced waves are in state N over time.
	for state, ev := range stateEvents {
		if len(ev) == 0 {
			continue
		}
		sort.SliceStable(ev, func(i, j int) bool { return ev[i][0] < ev[j][0] })
		var times, counts []int64
		acc := int64(0)
		prevT := int64(math.MinInt64)
		for _, e := range ev {
			acc += e[1]
			if len(times) == 0 || e[0] != prevT {
				times = append(times, e[0])
				counts = append(counts, acc)
			} else {
				counts[len(counts)-1] = acc
			}
			prevT = e[0]
		}
		name := fmt.Sprintf("wstates%d.json", state)
		put(name, map[string]any{"name": name, "time": times, "state": counts})
	}

	dispatches := map[string]string{}
	for id, pc := range kernelOrder {
		name := fmt.Sprintf("%d / 0x%x", pc.CodeObj, pc.Addr)
		if d.Code != nil {
			if s, ok := d.Code.SymbolAt(pc); ok {
				name = s.Name
			}
		}
		dispatches[strconv.Itoa(id)] = name
	}
	occupancy["dispatches"] = dispatches
	occupancy["version"] = Version
	put("occupancy.json", occupancy)

	gfxv := "vega"
	if gfxip > 9 {
		gfxv = "navi"
	}
	counters := d.Counters
	if counters == nil {
		counters = []string{}
	}
	put("filenames.json", map[string]any{
		"global_begin_time": 0, "gfxv": gfxv, "gfxip": gfxip, "version": Version,
		"counter_names": counters, "wave_filenames": waveNames,
	})

	// code.json, in line-number order, with each kernel's name line first.
	code := [][10]any{}
	for _, l := range order {
		if l.kernel != nil {
			code = append(code, [10]any{"; " + l.kernel.Name, 0, l.number - 1, demangled(l.kernel.Name),
				l.pc.CodeObj, l.pc.Addr, 0, 0, 0, 0})
		}
		code = append(code, [10]any{l.line.Text, 0, l.number, l.line.Comment, l.pc.CodeObj, l.pc.Addr,
			l.hit, l.latency, l.stall, l.idle})
	}
	put("code.json", map[string]any{"code": code, "version": Version, "header": codeHeader})
	d.Rows = len(code)

	// stats_<dir>.csv, by code object then address.
	byAddr := append([]*codeLine(nil), order...)
	sort.Slice(byAddr, func(i, j int) bool {
		if byAddr[i].pc.CodeObj != byAddr[j].pc.CodeObj {
			return byAddr[i].pc.CodeObj < byAddr[j].pc.CodeObj
		}
		return byAddr[i].pc.Addr < byAddr[j].pc.Addr
	})
	stats := filepath.Base(StatsName(d.Dir))
	errs = append(errs, d.writeStats(filepath.Join(stage.Dir(), stats), byAddr))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return stage.Commit(base, stats)
}

// StatsName is the CSV written next to a decoded dispatch directory.
func StatsName(dir string) string {
	return filepath.Join(filepath.Dir(dir), "stats_"+filepath.Base(dir)+".csv")
}

// writeStats writes the stats CSV at path (in the stage).
func (d *Dispatch) writeStats(path string, lines []*codeLine) error {
	// A new file in the private stage; 0666 less the umask, as os.Create.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	_ = w.Write([]string{"CodeObj", "Vaddr", "Instruction", "Hitcount", "Latency", "Stall", "Idle", "Source"})
	for _, l := range lines {
		if l.kernel != nil {
			_ = w.Write([]string{u(l.pc.CodeObj), u(l.pc.Addr), "; " + l.kernel.Name, "0", "0", "0", "0", demangled(l.kernel.Name)})
		}
		_ = w.Write([]string{u(l.pc.CodeObj), u(l.pc.Addr), l.line.Text, i(l.hit), i(l.latency), i(l.stall), i(l.idle), l.line.Comment})
	}
	w.Flush()
	err = w.Error()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = &os.PathError{Op: pe.Op, Path: StatsName(d.Dir), Err: pe.Err}
	}
	return err
}

func demangled(name string) string {
	s, err := demangle.ToString(name)
	if err != nil {
		return ""
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
