package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/attach"
	"github.com/rocprof-go/rocprof-go/internal/jobdir"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
)

// ManifestName is the manifest's file name at the top of the output directory.
const ManifestName = "run.json"

// Manifest describes one rocprof-go run: what ran, how it ended, and every
// file it wrote with its record count.
type Manifest struct {
	Version    string            `json:"version"`
	Command    []string          `json:"command"`
	Options    map[string]string `json:"options"`
	Agents     []ManifestAgent   `json:"agents"`
	ExitStatus int               `json:"exit_status"`
	TimedOut   bool              `json:"timed_out,omitempty"`
	Error      string            `json:"error,omitempty"`
	Passes     []ManifestPass    `json:"passes"`
	Files      []ManifestFile    `json:"files"`
	// DomainRecords counts the run's records by rocprofv3 domain
	// (KERNEL_DISPATCH, HIP_API, HSA_API, MARKER_API, MEMORY_COPY,
	// MEMORY_ALLOCATION, SCRATCH_MEMORY, COUNTER_COLLECTION), whatever
	// formats were written; a domain that recorded nothing is absent. Nil
	// when no pass's outputs were written.
	DomainRecords map[string]int64 `json:"domain_records,omitempty"`
	// FormatBytes is what each output format took on disk, in all and per
	// record of the run (domain_records): to set beside the estimate the
	// run's start line gives (docs/performance.md).
	FormatBytes map[string]FormatBytes `json:"format_bytes,omitempty"`
	// PID is the rocprof-go process's; Started and Finished bound the run.
	// Host is the node's name; ClockOffsetNs its CLOCK_REALTIME minus
	// CLOCK_BOOTTIME when the run started: the records' timestamps are the
	// node's boottime, and this offset puts them on the realtime clock that
	// keeps a job's nodes in step.
	Host          string `json:"host,omitempty"`
	ClockOffsetNs int64  `json:"clock_offset_ns,omitempty"`
	// Rank is set when a launcher (mpirun, srun, ...) started this
	// rocprof-go: the run is one rank of a job, and its manifest is that
	// rank's part of the job's (jobdir).
	Rank     *ManifestRank `json:"rank,omitempty"`
	PID      int           `json:"pid,omitempty"`
	Started  time.Time     `json:"started,omitzero"`
	Finished time.Time     `json:"finished,omitzero"`
	// AppExitToFinishS is the time from the last pass's app exit to
	// Finished: what the outputs kept the user waiting (issue 43).
	AppExitToFinishS float64 `json:"app_exit_to_finish_s,omitempty"`
	// LostDomains are requested domains a process could not collect (the
	// run failed); UnavailableDomains are domains an aggregate option
	// implied that a process's runtime cannot give (a notice).
	LostDomains        []DomainLoss `json:"lost_domains,omitempty"`
	UnavailableDomains []DomainLoss `json:"unavailable_domains,omitempty"`
	// LostRecords are processes whose records did not all reach the
	// outputs, SkippedSpools spool files that could not be read (the run
	// failed).
	LostRecords   []RecordLoss `json:"lost_records,omitempty"`
	SkippedSpools []string     `json:"skipped_spools,omitempty"`
	// TruncatedNames are the processes whose records hold a name or
	// message cut to fit a record (over ~64 KiB): noted, not a failure.
	TruncatedNames []TruncatedNames `json:"truncated_names,omitempty"`
	// NoGPU are the processes whose GPU stack found no GPU: hsa_init
	// failed (with what the thunk said about it), or the HSA runtime had
	// no GPU agent (the run failed).
	NoGPU []NoGPU `json:"no_gpu,omitempty"`
	// UnprofiledProcesses are the app's processes that could not record:
	// their spool could not be created (setuid, a private /dev/shm), or
	// they were started without the profiler (LD_PRELOAD removed). The run
	// failed: nothing they did is in the outputs.
	UnprofiledProcesses []launch.UnprofiledProcess `json:"unprofiled_processes,omitempty"`
	// Attach is what an attach did (--attach PID, docs/attach.md): the
	// processes attached, the window (wall clock), the time each took to
	// attach and to detach, the GOT slots restored, the dispatches lost at
	// the detach, whether the library left each process.
	Attach *attach.Report `json:"attach,omitempty"`
	// AttachWindows says how an attach's counter passes were collected,
	// one per attach window (docs/attach.md, "Counters while attached"), as
	// stderr said it; each pass's window is then its Attach.
	AttachWindows string `json:"attach_windows,omitempty"`
	// Concurrent holds the manifests of other runs that wrote into the
	// same directory while this one ran (their own Concurrent emptied), so
	// that run.json lists every file of overlapping runs, not only the last.
	Concurrent []Manifest `json:"concurrent_runs,omitempty"`
}

// ManifestRank is what the launcher that started the run said of it
// (placeholder.LauncherOf).
type ManifestRank struct {
	Launcher     string `json:"launcher"`
	Job          string `json:"job,omitempty"`
	Rank         string `json:"rank"`
	Size         string `json:"size,omitempty"`
	RankVariable string `json:"rank_variable,omitempty"`
	// SharedDir says whether every rank of the job writes its manifest
	// beside this one: the output directory (-d) does not depend on the
	// rank, host, pid or environment. Only then do the ranks below the
	// job's size with no manifest here count as missing (Job.Missing);
	// with -d 'prof/%rank%' each directory holds one rank by design. Nil
	// in manifests of versions that did not say.
	SharedDir *bool `json:"shared_directory,omitempty"`
}

// ranksShareDir reports whether the other ranks of a job write into top
// too: the fixed part of the output directory template (topDir) comes out
// the same for a process with another pid, host and environment (every
// variable changed, the launcher's rank among them). A -d that names
// any of these is taken as one directory per rank.
func ranksShareDir(cfg *options.Config, top string) bool {
	if cfg.OutputDirectory == "" {
		return true
	}
	p := placeholder.Current()
	other := p
	other.Pid, other.Ppid, other.Pgid, other.Sid = p.Pid+7919, p.Ppid+7919, p.Pgid+7919, p.Sid+7919
	other.Hostname = p.Hostname + "-another"
	other.LookupEnv = func(k string) (string, bool) {
		v, ok := os.LookupEnv(k)
		if ok {
			v += "1"
		}
		return v, ok
	}
	part, cut := placeholder.RunPart(cfg.OutputDirectory, other)
	if cut {
		part = filepath.Dir(part + "x")
	}
	return filepath.Clean(part) == top
}

// ManifestAgent is one GPU the run used (as known before the app started).
type ManifestAgent struct {
	Index   int    `json:"index"`
	NodeID  int    `json:"node_id"`
	Arch    string `json:"arch"`
	Virtual bool   `json:"virtual,omitempty"`
}

// ManifestPass is one run of the application.
type ManifestPass struct {
	Dir        string   `json:"dir"`
	Counters   []string `json:"counters,omitempty"`
	ExitStatus int      `json:"exit_status"`
	TimedOut   bool     `json:"timed_out,omitempty"`
	DurationS  float64  `json:"duration_s"`
	// Drain is what the drain of the pass's spools from memory to the
	// output file system did while its app ran (docs/reliability.md).
	Drain *launch.DrainReport `json:"drain,omitempty"`
	// Attach is the pass's attach window when a run attached once per
	// counter pass (the run's Attach is the first window's).
	Attach *attach.Report `json:"attach,omitempty"`
}

// ManifestFile is one output file, its path relative to the manifest.
type ManifestFile struct {
	Path    string `json:"path"`
	Format  string `json:"format"`
	Domain  string `json:"domain"`
	Records int64  `json:"records"`
	// Bytes is the file's size (a directory's: its files'), when the run
	// ended.
	Bytes int64 `json:"bytes,omitempty"`
}

// WriteManifest writes dir/run.json atomically: a reader never sees half a
// manifest. A run.json left by a run that finished after m started (so the
// two overlapped) is kept in m.Concurrent; an older one is replaced. Runs
// finishing at the same moment serialise on a lock of the directory.
//
// A rank of a job (m.Rank) takes no lock and reads nothing: it writes its
// manifest into the job's directory (jobdir.Write: this user's, under a
// name no other rank uses) and run.json as its own (the last rank to finish leaves its
// run.json; the readers take the job's manifests).
func WriteManifest(dir string, m *Manifest) error {
	return writeManifest(dir, m, os.Stderr)
}

// writeManifest is WriteManifest saying on warn where a rank's manifest
// went when its job directory's name was taken.
func writeManifest(dir string, m *Manifest, warn io.Writer) error {
	if err := atomicfile.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if m.Rank != nil {
		return writeRankManifest(dir, m, warn)
	}
	unlock, err := lockManifest(dir)
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	defer unlock()
	m.Concurrent = overlappingRuns(dir, m)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	// A temporary file renamed onto run.json: a symlink planted there is
	// replaced, never followed.
	if err := atomicfile.WriteFile(filepath.Join(dir, ManifestName), append(data, '\n'), atomicfile.Public); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

func writeRankManifest(dir string, m *Manifest, warn io.Writer) error {
	m.Concurrent = nil
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	// This user's own job directory (jobdir: another user's directory at
	// its name, or a link, is passed over with a warning).
	if _, err := jobdir.Write(dir, m.Rank.Job, m.Rank.Rank, data, warn); err != nil {
		return fmt.Errorf("write the job's manifest: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ManifestName), data, atomicfile.Public); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// Job is the manifest of a job whose ranks wrote into one output
// directory: each rank's own, in rank order.
type Job struct {
	Ranks []Manifest
	// Size is the job's size as its launcher said it (the largest any
	// rank's manifest records; 0 when none says); Missing are the ranks
	// below it that left no manifest (their rocprof-go was killed, failed
	// before writing it, or wrote elsewhere): the job's figures are not
	// the whole job's.
	Size    int   `json:"size,omitempty"`
	Missing []int `json:"missing_ranks,omitempty"`
	// SharedDir: every rank wrote into this directory (ManifestRank's):
	// only then is a rank with no manifest here missing.
	SharedDir bool `json:"shared_directory,omitempty"`
	// Refused says which files named like a rank's manifest were not read
	// and why (a link, another user's file, too big: jobdir).
	Refused []string `json:"refused,omitempty"`
	// Warnings say which job directories of this user's name were passed
	// over (another user's directory or a link at the name: the ranks
	// wrote beside it).
	Warnings []string `json:"warnings,omitempty"`
}

// LoadJob reads the manifests of the newest job whose ranks wrote into dir
// (jobdir.Newest), ordered by rank; nil when dir holds no job's (a file
// refused there is then an error naming it).
func LoadJob(dir string) (*Job, error) {
	found := jobdir.Newest(dir)
	if len(found.Manifests) == 0 {
		if why := append(found.Refused, found.Warnings...); len(why) > 0 {
			return nil, fmt.Errorf("%s holds no job manifest that can be believed: %s", dir, strings.Join(why, "; "))
		}
		if len(found.Others) > 0 {
			return nil, fmt.Errorf("%s holds no job manifest of yours (uid %d), only other users' job directories (%s): read a job as the user who ran it",
				dir, os.Geteuid(), strings.Join(found.Others, ", "))
		}
		return nil, nil
	}
	j := &Job{Refused: found.Refused, Warnings: found.Warnings}
	var ranks []string
	shared := true
	for _, f := range found.Manifests {
		var m Manifest
		if err := json.Unmarshal(f.Data, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		j.Ranks = append(j.Ranks, m)
		if m.Rank != nil {
			ranks = append(ranks, m.Rank.Rank)
			if n, err := strconv.Atoi(m.Rank.Size); err == nil && n > j.Size {
				j.Size = n
			}
			shared = shared && m.Rank.SharedDir != nil && *m.Rank.SharedDir
		}
	}
	j.SharedDir = shared
	if j.Size > 0 && shared {
		j.Missing = jobdir.Missing(strconv.Itoa(j.Size), ranks)
	}
	sort.SliceStable(j.Ranks, func(a, b int) bool {
		ra, rb := j.Ranks[a].Rank, j.Ranks[b].Rank
		if ra == nil || rb == nil {
			return rb != nil
		}
		na, ea := strconv.Atoi(ra.Rank)
		nb, eb := strconv.Atoi(rb.Rank)
		if ea == nil && eb == nil {
			return na < nb
		}
		return ra.Rank < rb.Rank
	})
	return j, nil
}

// lockManifest takes an exclusive flock on the directory itself, which
// leaves no lock file among the outputs. Anyone who can open the directory
// can hold that lock (another user, in a shared output directory), so it
// is never waited for long: after manifestLockWait the run writes its
// run.json without it (the rename keeps the file whole; only a concurrent
// run's entry could be missed).
func lockManifest(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(manifestLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			f.Close()
			return func() {}, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// manifestLockWait bounds the wait for another run's run.json write, which
// takes milliseconds.
const manifestLockWait = 5 * time.Second

// maxManifestBytes bounds what is read of a run.json: a real one holds a
// few thousand file entries; a huge one is not read whole into memory.
const maxManifestBytes = 64 << 20

// overlappingRuns returns the runs recorded in dir/run.json (the previous
// writer and the runs it carried) that finished after m started, leaving
// out m itself and any whose files m has overwritten.
func overlappingRuns(dir string, m *Manifest) []Manifest {
	// Missing, damaged or not a regular file (a symlink planted to have
	// another file copied in): nothing to keep.
	if st, err := os.Lstat(filepath.Join(dir, ManifestName)); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	old, err := LoadManifest(dir)
	if err != nil {
		return nil
	}
	mine := map[string]bool{}
	for _, f := range m.Files {
		mine[f.Path] = true
	}
	var runs []Manifest
	for _, r := range append([]Manifest{*old}, old.Concurrent...) {
		if r.Finished.IsZero() || !r.Finished.After(m.Started) || (r.PID == m.PID && r.Started.Equal(m.Started)) {
			continue
		}
		clash := false
		for _, f := range r.Files {
			clash = clash || mine[f.Path]
		}
		if clash {
			continue
		}
		r.Concurrent = nil
		runs = append(runs, r)
	}
	return runs
}

// LoadManifest reads dir/run.json: a regular file (a symlink is not
// followed, a FIFO not waited on) of at most maxManifestBytes.
func LoadManifest(dir string) (*Manifest, error) {
	return loadManifestFile(filepath.Join(dir, ManifestName))
}

func loadManifestFile(path string) (*Manifest, error) {
	f, st, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > maxManifestBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than a run manifest holds (%d): not read", path, st.Size(), maxManifestBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
