package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/jobdir"
	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// Source is one stored run as the analyses read it: its ROCpd databases, or
// its trace CSV files (never both), and the options it was recorded with
// when its run.json says.
type Source struct {
	Path      string   // as the user gave it
	Databases []string // ROCpd database files
	CSVFiles  []string // trace CSV files (*kernel_trace.csv, ...)
	// Options are run.json's "options" (e.g. truncate_kernels), nil when
	// the run has no manifest.
	Options map[string]string
	// Writers names, for each file a manifest listed, the run that wrote
	// it (its rocprof-go's host, pid and start): a process's identity,
	// whatever the file is named, that tells a rank's outputs from its
	// rescue's copy of the same records.
	Writers map[string]RunID
	// Problems say why the run's records are not the app's whole run, as
	// its run.json tells (timed out, killed by a signal, records, domains
	// or spools lost; manifest.go); summary and compare refuse such a
	// run unless asked (CheckComplete).
	Problems []string
}

// RunID identifies the rocprof-go run that wrote a file: its host, pid
// and start (run.json's host, pid and started).
type RunID struct {
	Host    string
	PID     int
	Started time.Time
}

// manifestLimit bounds the run.json read: anyone who can write the
// directory could plant a huge one.
const manifestLimit = 64 << 20

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// runManifest is the part of run.json (pkg/rocprof's Manifest) the
// analyses need: which files the run wrote, and its options.
type runManifest struct {
	Options map[string]string `json:"options"`
	// How the run ended: what Problems reads.
	ExitStatus    int               `json:"exit_status"`
	TimedOut      bool              `json:"timed_out"`
	Error         string            `json:"error"`
	LostRecords   []json.RawMessage `json:"lost_records"`
	LostDomains   []json.RawMessage `json:"lost_domains"`
	SkippedSpools []string          `json:"skipped_spools"`
	Passes        []struct {
		Dir        string `json:"dir"`
		ExitStatus int    `json:"exit_status"`
		TimedOut   bool   `json:"timed_out"`
	} `json:"passes"`
	Files []struct {
		Path   string `json:"path"`
		Format string `json:"format"`
	} `json:"files"`
	Concurrent []runManifest `json:"concurrent_runs"`
	// Who wrote the files (RunID).
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Rank is set when the run was a rank of a job (jobdir).
	Rank *struct {
		Job  string `json:"job"`
		Rank string `json:"rank"`
		Size string `json:"size"`
		// SharedDir: every rank writes here (pipeline.ManifestRank's).
		SharedDir *bool `json:"shared_directory"`
	} `json:"rank"`
}

// Resolve finds what a path given to summary or compare holds: a ROCpd
// database, a trace CSV file, a run.json, or a directory. A directory with
// a run.json is the run it describes (the databases it wrote, else its
// trace CSV files; leftovers of other runs in the directory are ignored).
// A directory without one must hold one run's files: databases or trace
// CSV files, in one directory (a run's per-process files sit side by
// side); anything else is an error naming the candidates.
func Resolve(path string) (*Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	src := &Source{Path: path}
	if !st.IsDir() {
		// A FIFO is refused, not waited on (SQLite would block on it).
		if err := atomicfile.CheckRegular(path); err != nil {
			return nil, fmt.Errorf("read run: %w", err)
		}
		switch {
		case filepath.Base(path) == "run.json":
			return resolveManifest(src, filepath.Dir(path), path)
		case traceOf(path) != nil:
			src.CSVFiles = []string{path}
		default:
			src.Databases = []string{path} // rocpd.Open says so if it is not one
		}
		return src, nil
	}
	// The ranks of a job that wrote here: their manifests are one run
	// (jobdir; run.json is then only the last rank's). A run.json of a run
	// that was no rank, written after the job, is that run.
	if m := filepath.Join(path, "run.json"); isRegular(m) {
		if rm, err := readRunManifest(m); err == nil && rm.Rank != nil {
			if found := jobdir.Of(path, rm.Rank.Job); len(found.Manifests) > 0 || len(found.Refused) > 0 {
				return resolveJob(src, path, found)
			}
		}
		return resolveManifest(src, path, m)
	}
	if found := jobdir.Newest(path); len(found.Manifests) > 0 {
		return resolveJob(src, path, found)
	} else if why := append(found.Refused, found.Warnings...); len(why) > 0 {
		return nil, fmt.Errorf("%s holds no job manifest that can be believed: %s", path, strings.Join(why, "; "))
	}
	return resolveDir(src, path)
}

// resolveJob takes a job's ranks' manifests as one run. A manifest that
// was refused (another user's, a link: jobdir) and a rank below the job's
// size with no manifest are problems: the job's figures are not the whole
// job's, and a gate (compare) must not pass on half a job.
func resolveJob(src *Source, dir string, found jobdir.Found) (*Source, error) {
	var runs []*runManifest
	size := 0
	var ranks []string
	shared := true // every rank writes here: only then is one missing
	for _, f := range found.Manifests {
		m, err := parseRunManifest(f.Path, f.Data)
		if err != nil {
			return nil, err
		}
		runs = append(runs, m)
		if m.Rank != nil {
			ranks = append(ranks, m.Rank.Rank)
			if n, err := strconv.Atoi(m.Rank.Size); err == nil && n > size {
				size = n
			}
			shared = shared && m.Rank.SharedDir != nil && *m.Rank.SharedDir
		}
	}
	for _, why := range found.Refused {
		src.Problems = append(src.Problems, "a rank's manifest was refused: "+why)
	}
	if size > 0 && shared {
		if miss := jobdir.Missing(strconv.Itoa(size), ranks); len(miss) > 0 {
			src.Problems = append(src.Problems, fmt.Sprintf("%d of the job's %d ranks left no manifest (rank %s): their rocprof-go was killed or failed before writing it, or wrote elsewhere",
				len(miss), size, jobdir.Ranges(miss)))
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("the job in %s has no manifest that can be believed: %s", dir, strings.Join(src.Problems, "; "))
	}
	paths := make([]string, len(found.Manifests))
	for i, f := range found.Manifests {
		paths[i] = f.Path
	}
	return resolveRuns(src, dir, paths[0], runs)
}

func isRegular(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

// resolveManifest takes the files run.json lists (its concurrent runs'
// too: runs that wrote into one directory at once are one run).
func resolveManifest(src *Source, dir, path string) (*Source, error) {
	return resolveManifests(src, dir, []string{path})
}

// resolveManifests takes the files the manifests at paths list, and their
// concurrent runs', as one run's.
func resolveManifests(src *Source, dir string, paths []string) (*Source, error) {
	var runs []*runManifest
	for _, mp := range paths {
		m, err := readRunManifest(mp)
		if err != nil {
			return nil, err
		}
		runs = append(runs, m)
	}
	return resolveRuns(src, dir, paths[0], runs)
}

// resolveRuns takes the files the manifests list (path names the first in
// errors about a listed file).
func resolveRuns(src *Source, dir, path string, ms []*runManifest) (*Source, error) {
	var runs []runManifest
	for _, m := range ms {
		if src.Options == nil {
			src.Options = m.Options
		}
		runs = append(runs, *m)
		runs = append(runs, m.Concurrent...)
	}
	for i := range runs {
		src.Problems = append(src.Problems, runs[i].problems()...)
	}
	formats := map[string]bool{}
	for _, r := range runs {
		for _, fl := range r.Files {
			p := fl.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			formats[fl.Format] = true
			if r.PID != 0 {
				if src.Writers == nil {
					src.Writers = map[string]RunID{}
				}
				src.Writers[p] = RunID{Host: r.Host, PID: r.PID, Started: r.Started}
			}
			if format.ROCpd.Is(fl.Format) || format.CSV.Is(fl.Format) && traceOf(p) != nil {
				if err := atomicfile.CheckRegular(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("%s lists %s: %w", path, fl.Path, err)
				}
			}
			switch {
			case format.ROCpd.Is(fl.Format):
				src.Databases = append(src.Databases, p)
			case format.CSV.Is(fl.Format) && traceOf(p) != nil:
				src.CSVFiles = append(src.CSVFiles, p)
			}
		}
	}
	slices.Sort(src.Databases)
	slices.Sort(src.CSVFiles)
	src.Databases, src.CSVFiles = slices.Compact(src.Databases), slices.Compact(src.CSVFiles)
	if len(src.Databases) > 0 {
		src.CSVFiles = nil // the database holds everything the CSV files do, copy sizes included
		return src, nil
	}
	if len(src.CSVFiles) > 0 {
		return src, nil
	}
	var wrote []string
	for f := range formats {
		wrote = append(wrote, f)
	}
	sort.Strings(wrote)
	if len(wrote) == 0 {
		return nil, fmt.Errorf("the run in %s wrote no trace files (run.json lists none): nothing was traced, or the run failed; see run.json", dir)
	}
	return nil, fmt.Errorf("the run in %s wrote %s only: compare and summary read ROCpd databases (-f rocpd, the default) or CSV traces (-f csv); "+
		"convert the run with `rocprof-go convert` or record it again with one of those formats", dir, strings.Join(wrote, ", "))
}

// readRunManifest reads one run.json (or a rank's manifest): a regular
// file of at most manifestLimit bytes.
func readRunManifest(path string) (*runManifest, error) {
	f, _, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, manifestLimit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > manifestLimit {
		return nil, fmt.Errorf("%s is larger than %d MiB: not a rocprof-go run manifest", path, manifestLimit>>20)
	}
	return parseRunManifest(path, data)
}

func parseRunManifest(path string, data []byte) (*runManifest, error) {
	var m runManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not a rocprof-go run manifest: %w", path, err)
	}
	return &m, nil
}

// resolveDir searches a directory without run.json for one run's files.
func resolveDir(src *Source, dir string) (*Source, error) {
	var nested []string // other runs' directories below dir, each with its run.json
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if atomicfile.IsTemp(p) { // a file or stage a killed run left: never a result
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != dir && isRegular(filepath.Join(p, "run.json")) {
				// Another run's directory: a run of its own, not part of this one.
				nested = append(nested, filepath.Join(p, "run.json"))
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch {
		case traceOf(p) != nil:
			src.CSVFiles = append(src.CSVFiles, p)
		case isDatabase(p):
			src.Databases = append(src.Databases, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read run directory: %w", err)
	}
	sort.Strings(src.Databases)
	sort.Strings(src.CSVFiles)
	sort.Strings(nested)
	all := append(append(append([]string{}, src.Databases...), src.CSVFiles...), nested...)
	if len(all) == 0 {
		return nil, fmt.Errorf("%s holds no run: no run.json, ROCpd database or trace CSV file (*kernel_trace.csv, *hip_api_trace.csv, …); "+
			"give a run's output directory (-d), its .db file or a directory written with -f csv", dir)
	}
	dirs := map[string]bool{}
	for _, p := range all {
		dirs[filepath.Dir(p)] = true
	}
	if len(nested) > 0 || len(dirs) > 1 || (len(src.Databases) > 0 && len(src.CSVFiles) > 0) {
		return nil, fmt.Errorf("%s holds several runs or output sets, and no run.json says which files are one run: %s; "+
			"give one of them (a run's directory, .db file, or a directory of one run's CSV files)", dir, candidates(dir, all))
	}
	return src, nil
}

// candidates lists the groups of files found, by directory, briefly.
func candidates(dir string, files []string) string {
	byDir := map[string][]string{}
	var order []string
	for _, p := range files {
		d := filepath.Dir(p)
		if _, ok := byDir[d]; !ok {
			order = append(order, d)
		}
		byDir[d] = append(byDir[d], filepath.Base(p))
	}
	var parts []string
	for i, d := range order {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more directories", len(order)-8))
			break
		}
		names := byDir[d]
		list := strings.Join(names[:min(3, len(names))], ", ")
		if len(names) > 3 {
			list += fmt.Sprintf(", … (%d files)", len(names))
		}
		parts = append(parts, d+": "+list)
	}
	return strings.Join(parts, "; ")
}

func isDatabase(path string) bool {
	f, err := atomicfile.OpenInput(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, sqliteMagic)
}

// problems says why a run's figures may not be the app's: it timed out,
// the app died of a signal, records or domains were lost, spools could not
// be read, or the run failed (run.json's own words).
func (m *runManifest) problems() []string {
	var out []string
	timedOut := m.TimedOut
	for _, p := range m.Passes {
		timedOut = timedOut || p.TimedOut
	}
	status := m.ExitStatus
	for _, p := range m.Passes {
		if status == 0 && p.ExitStatus != 0 {
			status = p.ExitStatus
		}
	}
	switch {
	case timedOut:
		out = append(out, "it timed out (--timeout stopped the app)")
	case status > 128 && status < 128+65:
		out = append(out, fmt.Sprintf("the app was killed by signal %d (exit status %d)", status-128, status))
	}
	if n := len(m.LostRecords); n > 0 {
		out = append(out, fmt.Sprintf("records of %d process(es) were lost (lost_records)", n))
	}
	if n := len(m.LostDomains); n > 0 {
		out = append(out, fmt.Sprintf("%d requested domain(s) were not collected (lost_domains)", n))
	}
	if n := len(m.SkippedSpools); n > 0 {
		out = append(out, fmt.Sprintf("%d spool(s) could not be read (skipped_spools)", n))
	}
	if m.Error != "" && len(out) == 0 {
		out = append(out, "it failed: "+m.Error)
	}
	return out
}

// CheckComplete returns an *IncompleteError when the run's run.json says
// its records are not the app's whole run (Problems), unless allow.
func (s *Source) CheckComplete(allow bool) error {
	if allow || len(s.Problems) == 0 {
		return nil
	}
	return &IncompleteError{Path: s.Path, Problems: s.Problems}
}

// IncompleteError refuses a run whose run.json says it is incomplete.
type IncompleteError struct {
	Path     string
	Problems []string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("run %s is incomplete: %s; its figures are not the whole app's: record it again, or pass --allow-incomplete to use it anyway",
		e.Path, strings.Join(e.Problems, "; "))
}
