package att

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// rawName matches the shim's raw trace files:
// <pid>_agent_<node>_shader_engine_<se>_<dispatch>.att.
var rawName = regexp.MustCompile(`^(\d+)_agent_(\d+)_shader_engine_(\d+)_(\d+)\.att$`)

// RawFile is one raw trace file.
type RawFile struct {
	Path      string
	PID       int
	Agent, SE int
	Dispatch  uint64
}

// ListRaw returns the raw trace files in dir, ordered by process, agent,
// dispatch and shader engine.
func ListRaw(dir string) ([]RawFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []RawFile
	for _, e := range ents {
		m := rawName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		agent, _ := strconv.Atoi(m[2])
		se, _ := strconv.Atoi(m[3])
		disp, _ := strconv.ParseUint(m[4], 10, 64)
		out = append(out, RawFile{Path: filepath.Join(dir, e.Name()), PID: pid, Agent: agent, SE: se, Dispatch: disp})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.PID != b.PID {
			return a.PID < b.PID
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.Dispatch != b.Dispatch {
			return a.Dispatch < b.Dispatch
		}
		return a.SE < b.SE
	})
	return out, nil
}

// DirOptions configures DecodeDir.
type DirOptions struct {
	Dir      string    // where the raw files, code objects and index are
	Since    time.Time // only raw files written since (zero: all), e.g. this run's
	Library  string    // the decoder library's path
	Counters []string  // --att-perfcounters as given (NAME or NAME:simdmask)
	Log      io.Writer
}

// DirResult says what DecodeDir wrote.
type DirResult struct {
	Dispatches []string // decoded directories
	Rows       []int    // per directory, the rows of its code.json and stats CSV
	Warnings   []string
}

// DecodeDir decodes every traced dispatch in a directory: the raw files of
// one (process, agent, dispatch) go through the decoder shader engine by
// shader engine and become ui_output_agent_<agent>_dispatch_<dispatch>/ and
// stats_ui_output_agent_<agent>_dispatch_<dispatch>.csv, as rocprofv3 names
// them (with _pid<pid> appended when several processes traced the same
// agent and dispatch id). The raw files are kept.
func DecodeDir(o DirOptions) (*DirResult, error) {
	raws, err := ListRaw(o.Dir)
	if err != nil {
		return &DirResult{}, err
	}
	if !o.Since.IsZero() {
		kept := raws[:0]
		for _, r := range raws {
			if st, err := os.Stat(r.Path); err == nil && !st.ModTime().Before(o.Since) {
				kept = append(kept, r)
			}
		}
		raws = kept
	}
	if len(raws) == 0 {
		return &DirResult{}, nil
	}
	dec, err := Open(o.Library)
	if err != nil {
		return nil, err
	}
	defer dec.Close()

	type key struct {
		pid, agent int
		dispatch   uint64
	}
	groups := map[key][]RawFile{}
	var keys []key
	names := map[string]int{}
	for _, r := range raws {
		k := key{r.PID, r.Agent, r.Dispatch}
		if groups[k] == nil {
			keys = append(keys, k)
			names[fmt.Sprintf("%d/%d", r.Agent, r.Dispatch)]++
		}
		groups[k] = append(groups[k], r)
	}
	codes := map[int]*CodeObjects{}
	res := &DirResult{}
	var errs []error
	for _, k := range keys {
		code := codes[k.pid]
		if code == nil {
			entries, err := ReadCodeObjectIndex(filepath.Join(o.Dir, CodeObjectIndexName(k.pid)))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				res.Warnings = append(res.Warnings, err.Error())
			}
			code = NewCodeObjects(o.Dir, entries)
			codes[k.pid] = code
		}
		name := fmt.Sprintf("ui_output_agent_%d_dispatch_%d", k.agent, k.dispatch)
		if names[fmt.Sprintf("%d/%d", k.agent, k.dispatch)] > 1 {
			name += fmt.Sprintf("_pid%d", k.pid)
		}
		d := &Dispatch{Dir: filepath.Join(o.Dir, name), Counters: o.Counters, Code: code}
		for _, r := range groups[k] {
			data, err := os.ReadFile(r.Path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			tr, err := dec.Decode(r.SE, data, code)
			if err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v", filepath.Base(r.Path), err))
			}
			for _, info := range tr.Infos {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s", filepath.Base(r.Path), info))
			}
			d.SEs = append(d.SEs, tr)
		}
		if err := d.Write(); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Dispatches = append(res.Dispatches, d.Dir)
		res.Rows = append(res.Rows, d.Rows)
	}
	if o.Log != nil {
		for _, w := range res.Warnings {
			fmt.Fprintf(o.Log, "rocprof-go: thread trace: %s\n", w)
		}
	}
	return res, errors.Join(errs...)
}
