package output

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/output/csv"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/parquet"
	"github.com/rocprof-go/rocprof-go/internal/output/summarytables"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Kinds of File that are no -f format.
const (
	fileSummary model.Format = "summary" // --summary-output-file NAME
	fileLog     model.Format = "log"     // collection_periods.log
)

// Write is the one orchestration of the outputs of a pass: it groups the
// spools by resolved output prefix once (processes whose prefixes are equal
// share one set of files), reads each spool's catalogue, and hands every
// group to every requested writer:
//
//  1. CSV, with --stats its stats files (the catalogues' counts fill
//     Result.Groups for the run's accounting);
//  2. if the group recorded something: the summaries, then every other
//     format in -f order, each at the destination Write gives it
//     (<Dir>/<prefix>_<file>, or standard output for -o stdout);
//
// then collection_periods.log (Config.CollectionPeriods). Each spool's
// catalogue is read once, with only what the requested writers read, and
// handed to every writer of its group.
//
// Only Write decides where files go. Spools that are not readable spools
// (a process killed while creating one) are listed in Result.Skipped, not
// treated as errors. The first error stops the writing; Result lists what
// was written until then.
//
// A spool cut short while it was read (tracing's fault guard: its records
// past the cut are lost) does not stop the writing: every output is made
// from what could be read, and the error returned, with the result, is
// then the spools' *tracing.TornSpoolError (tracing.OnlyTorn).
func Write(cfg model.Config, spoolDir string) (res *model.Result, err error) {
	mark := tracing.TornMark()
	var read []string // the spools opened
	defer func() { err = withTorn(err, tracing.TornSince(mark, read)) }()
	stream := model.IsStreamName(cfg.PrefixTemplate)
	if stream {
		cfg.FS = &streamFS{w: cfg.DataOut()}
	} else if cfg.FS == nil {
		cfg.FS = model.OSFS{}
	}
	if cfg.PrefixTemplate == "" {
		cfg.PrefixTemplate = model.DefaultPrefixTemplate
	}
	if cfg.PCInstructions == nil {
		cfg.PCInstructions = newPCInstructions // the disassembler: cgo's side (internal/att)
	}
	res = &model.Result{}
	if cfg.V1Enabled() && !cfg.Has(model.FormatCSV) {
		// With -o NAME.csv, --stats asks for rocprof v1's stats files
		// (WriteV1, once every pass ran), not rocprofv3's.
		cfg.Stats = false
	}
	csvOn := cfg.Has(model.FormatCSV) || cfg.Stats && !cfg.StatsOnlyWithCSV
	var others []*Writer
	for _, f := range cfg.Formats {
		if f == model.FormatCSV {
			continue
		}
		w, err := LookupWriter(f)
		if err != nil {
			return res, err
		}
		others = append(others, w)
	}
	summaryOn := cfg.SummaryOn()
	if !csvOn && len(others) == 0 && !summaryOn && !cfg.CountEvents && !cfg.CollectionPeriods {
		return res, nil
	}
	groups, err := groupSpools(&cfg, spoolDir, res)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		read = append(read, g.paths...)
	}
	// One catalogue per spool, read once for every writer, with only what
	// the requested writers read.
	need := model.NeedCounts
	if csvOn || summaryOn || len(others) > 0 {
		need |= model.NeedNames
	}
	if csvOn && cfg.Has(model.FormatCSV) {
		need |= model.NeedCounterSums
	}
	if len(others) > 0 {
		need |= model.NeedSets
	}

	// Group by group: the catalogues, CSV, then the summaries and the other
	// formats; a group's catalogues are dropped before the next group's
	// are read. Result.Files lists every group's CSV files first, then the
	// collection periods logs, then the other files.
	var later []model.File
	if cfg.Claim != nil && !stream {
		for _, g := range groups {
			if err := cfg.Claim(g.prefix); err != nil {
				return res, err
			}
		}
	}
	for _, g := range groups {
		procs, err := scanSpools(&cfg, g.paths, need)
		if err == nil {
			for _, p := range procs {
				st := p.ReadStats
				res.Processes = append(res.Processes, model.Process{PID: p.Info.PID, Spool: p.Info.Path,
					Prefix: g.prefix, Records: st.Records, Torn: st.Torn, Invalid: st.Invalid,
					Dropped: p.Info.Dropped, Truncated: p.Info.TruncatedRecords, PCSamplesLost: p.PCSamplesLost,
					LostChunks: p.LostChunks, StoreError: p.Info.StoreError()})
			}
			if csvOn {
				err = csv.WriteGroup(&cfg, g.prefix, procs, res)
			}
		}
		res.Groups = append(res.Groups, newGroup(g.prefix, procs))
		for _, p := range procs {
			res.Statuses = append(res.Statuses, model.ProcessStatus{PID: int(p.Info.PID), Status: p.Statuses()})
			p.CounterSums = nil // CSV's alone
		}
		if err == nil && (len(others) > 0 || summaryOn) {
			err = writeOthers(&cfg, &res.Groups[len(res.Groups)-1], procs, others, summaryOn, stream, &later)
		}
		if err != nil {
			res.Files = append(res.Files, later...)
			return res, err
		}
	}
	if stream {
		for i := range res.Files {
			res.Files[i].Path = "stdout" // -o stdout/stderr: no file, the data went there
		}
	}

	// rocprofv3's collection_periods.log, when the app's environment asked
	// for it (ROCPROF_COLLECTION_PERIOD_TESTING): the preload library noted
	// the timer's steps in the spools.
	if cfg.CollectionPeriods {
		for _, g := range res.Groups {
			wrote, err := WriteCollectionPeriods(g.Prefix, g.Spools)
			if err != nil {
				res.Files = append(res.Files, later...)
				return res, fmt.Errorf("collection periods log: %w", err)
			}
			if wrote {
				res.Files = append(res.Files, model.File{Path: CollectionPeriodsPath(g.Prefix), Format: fileLog})
			}
		}
	}
	res.Files = append(res.Files, later...)
	return res, nil
}

// writeOthers writes one group's summaries and formats besides CSV from
// its catalogues, listing the files in files.
func writeOthers(cfg *model.Config, g *model.Group, procs []*model.Catalogue, others []*Writer, summaryOn, stream bool,
	files *[]model.File) error {
	if !cfg.WriteEmpty && (g.Events == 0 || g.Bytes < cfg.MinimumOutputBytes) {
		// Nothing recorded, or less raw data than --minimum-output-data:
		// rocprofv3 then writes none of the per-run outputs (JSON,
		// Perfetto, OTF2, ROCpd, summaries), as the CSV side skips
		// agent_info.csv and domain_stats.csv.
		return nil
	}
	in := &model.Input{Spools: g.Spools, Config: *cfg, Catalogues: procs}
	if cfg.RankOf != nil && len(g.Processes) > 0 {
		in.Config.ParquetRank = cfg.RankOf(g.Processes[0])
	}
	if cfg.ParquetHive && len(g.Processes) > 0 {
		in.Config.ParquetHost = hostPartition(g.Processes[0].Hostname)
	}
	res := &model.Result{}
	defer func() { *files = append(*files, res.Files...) }()
	if summaryOn {
		if err := writeSummaryTo(g.Prefix, in, res); err != nil {
			return err
		}
	}
	for _, w := range others {
		if err := w.writeGroup(g, in, stream, res); err != nil {
			return err
		}
	}
	g.PerfettoCapped = in.PerfettoCapped
	return nil
}

// writeGroup writes one group in the writer's format at the destination
// Write chose: standard output for the text formats under -o stdout,
// else <prefix>_<file> (Parquet: one file per domain).
func (w *Writer) writeGroup(g *model.Group, in *model.Input, stream bool, res *model.Result) error {
	if w.Format == FormatJSON && stream {
		// -o stdout / -o stderr: rocprofv3 streams its text outputs to
		// standard output; the binary formats stay files.
		if err := w.WriteTo(in.Config.DataOut(), in); err != nil {
			return err
		}
		res.Files = append(res.Files, model.File{Path: "stdout", Format: w.Format, Records: g.Events})
		return nil
	}
	if err := w.Write(g.Prefix, in); err != nil {
		return err
	}
	if w.Format == FormatParquet {
		// One file per domain (a hive layout puts them elsewhere than the
		// prefix): run.json names each with its records.
		for _, pf := range parquet.Files(g.Prefix, &in.Config) {
			n := g.Records[pf.Domain]
			if pf.Rows > 0 {
				n = pf.Rows
			}
			res.Files = append(res.Files, model.File{Path: pf.Path, Format: w.Format, Domain: pf.Domain, Records: n})
		}
		return nil
	}
	if w.Format == FormatPerfetto && in.PerfettoParts != nil {
		// A trace past the part size: run.json names each part.
		res.Files = append(res.Files, in.PerfettoParts...)
		in.PerfettoParts = nil
		return nil
	}
	res.Files = append(res.Files, model.File{Path: w.Path(g.Prefix), Format: w.Format, Records: g.Events})
	return nil
}

// writeSummaryTo prints the -S/-D/--summary-groups tables of a group to
// standard output (where rocprofv3 prints both "stdout" and "stderr"
// summaries) or into <prefix>_<name>.txt.
func writeSummaryTo(prefix string, in *model.Input, res *model.Result) error {
	path, toStdout := summarytables.Target(prefix, in.Config.SummaryOutputFile)
	if toStdout {
		return summarytables.Write(in.Config.Out(), in, true)
	}
	if err := atomicfile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	err := atomicfile.Write(path, atomicfile.Public, func(w io.Writer) error {
		return summarytables.Write(w, in, false)
	})
	if err != nil {
		return fmt.Errorf("summary output: %w", err)
	}
	res.Files = append(res.Files, model.File{Path: path, Format: fileSummary})
	return nil
}

// spoolGroup is one output set before its spools are read: a resolved
// prefix and its spools, in listing order.
type spoolGroup struct {
	prefix string
	paths  []string
}

// groupSpools lists the spools (Config.SpoolPaths, else spoolDir's) and
// groups them by resolved output prefix, in order of first appearance.
func groupSpools(cfg *model.Config, spoolDir string, res *model.Result) ([]*spoolGroup, error) {
	paths := cfg.SpoolPaths
	if paths == nil {
		var err error
		if paths, err = tracing.List(spoolDir); err != nil {
			return nil, err
		}
	}
	var groups []*spoolGroup
	byPrefix := map[string]*spoolGroup{}
	for _, p := range paths {
		r, err := tracing.Open(p)
		if err != nil {
			if errors.Is(err, tracing.ErrNotSpool) {
				res.Skipped = append(res.Skipped, p+": "+err.Error())
				continue
			}
			return nil, err
		}
		info := r.Process()
		_ = r.Close()
		prefix := filepath.Join(cfg.Dir, cfg.PrefixOf(info))
		g := byPrefix[prefix]
		if g == nil {
			g = &spoolGroup{prefix: prefix}
			byPrefix[prefix] = g
			groups = append(groups, g)
		}
		g.paths = append(g.paths, p)
	}
	return groups, nil
}

// scanSpools reads the catalogue of each spool of a group (one pass each),
// with what need asks for.
func scanSpools(cfg *model.Config, paths []string, need model.Needs) ([]*model.Catalogue, error) {
	procs := make([]*model.Catalogue, 0, len(paths))
	for _, path := range paths {
		r, err := tracing.Open(path)
		if err != nil {
			return procs, err
		}
		p, err := model.Scan(r, cfg, need)
		_ = r.Close()
		if err != nil {
			return procs, fmt.Errorf("%s: %w", path, err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// newGroup sums up a group's processes once their catalogues are read.
func newGroup(prefix string, procs []*model.Catalogue) model.Group {
	g := model.Group{Prefix: prefix, Records: map[string]uint64{}}
	for _, p := range procs {
		g.Spools = append(g.Spools, p.Info.Path)
		g.Processes = append(g.Processes, p.Info)
		for d := range p.Bytes {
			g.Bytes += p.Bytes[d]
			g.Events += p.Counts[d]
			if p.Counts[d] > 0 {
				g.Records[model.Domains[d].Column] += p.Counts[d]
			}
		}
	}
	return g
}

// hostPartition is a process's host= partition: its host name, or
// UNKNOWN_HOSTNAME as %hostname% names an unknown host.
func hostPartition(h string) string {
	if h == "" {
		return "UNKNOWN_HOSTNAME"
	}
	return h
}

// withTorn adds the spools cut short while read (torn, from
// tracing.TornSince) to err.
func withTorn(err, torn error) error {
	if torn == nil {
		return err
	}
	if err == nil {
		return torn
	}
	return errors.Join(err, torn)
}
