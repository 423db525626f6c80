package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// BatchJob is one entry of a batch file's top-level `batch:` list.
type BatchJob struct {
	// Name names the job's sub-directory of the batch output directory.
	Name string `yaml:"name"`
	// Command is the application and its arguments (never run through a shell).
	Command []string `yaml:"command"`
	// Options are rocprof-go options as on the command line.
	Options []string `yaml:"options"`
	// Dir is the app's working directory (relative to the batch file's).
	Dir string `yaml:"dir"`
	// Env adds or replaces environment variables for the app.
	Env map[string]string `yaml:"env"`
	// Timeout ends the app after this long (e.g. "30s"); exit status 124.
	Timeout string `yaml:"timeout"`
	// ExpectExit is the exit status that counts as success (default 0).
	ExpectExit *int `yaml:"expect_exit"`
}

// Batch is a parsed batch file.
type Batch struct {
	Jobs []BatchJob `yaml:"batch"`
	base string
}

// maxBatchBytes bounds a batch file (a list of jobs, not data).
const maxBatchBytes = 16 << 20

var jobName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// LoadBatch reads and checks a batch file.
func LoadBatch(path string) (*Batch, error) {
	data, err := atomicfile.ReadInput(path, maxBatchBytes)
	if err != nil {
		return nil, fmt.Errorf("batch file: %w", err)
	}
	if len(data) > maxBatchBytes {
		return nil, fmt.Errorf("batch file %s is larger than %d MiB: a batch file lists jobs; check the path", path, maxBatchBytes>>20)
	}
	var b Batch
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("batch file %s is not valid (a top-level \"batch:\" list of jobs with name, command, options, dir, env, timeout, expect_exit): %w", path, err)
	}
	if len(b.Jobs) == 0 {
		return nil, fmt.Errorf("batch file %s has no jobs: write a top-level \"batch:\" list", path)
	}
	seen := map[string]bool{}
	for i := range b.Jobs {
		j := &b.Jobs[i]
		if j.Name == "" {
			j.Name = fmt.Sprintf("job_%d", i+1)
		}
		if !jobName.MatchString(j.Name) {
			return nil, fmt.Errorf("batch file %s: job %d: name %q must be letters, digits, '.', '_' or '-'", path, i+1, j.Name)
		}
		if seen[j.Name] {
			return nil, fmt.Errorf("batch file %s: two jobs are named %q", path, j.Name)
		}
		seen[j.Name] = true
		if len(j.Command) == 0 {
			return nil, fmt.Errorf("batch file %s: job %q has no command (a list: [./app, arg1])", path, j.Name)
		}
		if err := checkJobOptions(*j); err != nil {
			return nil, fmt.Errorf("batch file %s: %w", path, err)
		}
		if j.Timeout != "" {
			if _, err := time.ParseDuration(j.Timeout); err != nil {
				return nil, fmt.Errorf("batch file %s: job %q: timeout %q is not a duration (e.g. 30s, 5m)", path, j.Name, j.Timeout)
			}
		}
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	b.base = abs
	return &b, nil
}

// checkJobOptions refuses a "--" among a job's options: the words after it
// would be run as the app instead of the job's command (which the batch
// table would then report as the job, ok).
func checkJobOptions(j BatchJob) error {
	for i, o := range j.Options {
		if o == "--" {
			return fmt.Errorf("job %q: options[%d] is \"--\", which would run %q instead of the job's command: "+
				"remove it from options; the app and its arguments go in command (a list: [./app, arg1])", j.Name, i, j.Options[i+1:])
		}
	}
	return nil
}

// BatchResult is how one job ended.
type BatchResult struct {
	Job      BatchJob
	Dir      string
	Exit     int
	Expected int
	OK       bool
	Err      error
	Duration time.Duration
	Files    int
	Records  int64
}

// RunBatch profiles each job in order into outDir/<name>/. Unless keepGoing,
// it stops after the first job that fails (an exit status other than the
// job's expect_exit, or an error). It reports whether every job that ran
// succeeded. When ctx is cancelled (the CLI cancels it on SIGINT/SIGTERM,
// which the running job's app receives itself), the running job ends as
// its app does, its data kept, and no further job starts.
func RunBatch(ctx context.Context, b *Batch, outDir string, keepGoing bool, opts Options) ([]BatchResult, bool) {
	var results []BatchResult
	allOK := true
	for _, job := range b.Jobs {
		if ctx.Err() != nil {
			allOK = false
			break
		}
		r := runJob(context.WithoutCancel(ctx), b, job, outDir, opts)
		results = append(results, r)
		if !r.OK {
			allOK = false
			if !keepGoing {
				break
			}
		}
	}
	return results, allOK
}

// CheckBatch checks every job's options as its run would before its app
// starts (option names and values, input files, counters against the GPU
// or virtual GPU, output formats), so that a mistake in the last job is
// found before the first job runs for an hour. The error names the job.
func CheckBatch(b *Batch, outDir string, opts Options) error {
	for _, job := range b.Jobs {
		if err := checkJobOptions(job); err != nil {
			return &BatchJobError{Job: job.Name, Err: err}
		}
		o := jobOptions(b, job, outDir, opts)
		plan, err := resolvePlan(o, job.Command)
		if err == nil {
			_, err = checkPlan(plan, o.Environ)
		}
		if err != nil {
			return &BatchJobError{Job: job.Name, Err: err}
		}
	}
	return nil
}

// BatchJobError is a batch job whose options are wrong; no job ran.
type BatchJobError struct {
	Job string
	Err error
}

func (e *BatchJobError) Error() string {
	return fmt.Sprintf("batch job %q: %v (no job ran: fix its options in the batch file)", e.Job, e.Err)
}

func (e *BatchJobError) Unwrap() error { return e.Err }

// jobOptions are the options one job runs with: its own, its output
// directory and timeout, its environment and working directory.
func jobOptions(b *Batch, job BatchJob, outDir string, opts Options) Options {
	args := append([]string{}, job.Options...)
	args = append(args, "-d", filepath.Join(outDir, job.Name))
	if job.Timeout != "" {
		args = append(args, "--timeout", job.Timeout)
	}
	o := opts
	o.Args = args
	o.Environ = mergeEnv(opts.Environ, job.Env)
	o.Dir = b.base
	if job.Dir != "" {
		o.Dir = job.Dir
		if !filepath.IsAbs(o.Dir) {
			o.Dir = filepath.Join(b.base, job.Dir)
		}
	}
	return o
}

func runJob(ctx context.Context, b *Batch, job BatchJob, outDir string, opts Options) BatchResult {
	dir := filepath.Join(outDir, job.Name)
	r := BatchResult{Job: job, Dir: dir}
	if job.ExpectExit != nil {
		r.Expected = *job.ExpectExit
	}
	if err := checkJobOptions(job); err != nil {
		r.Exit, r.Err = -1, err
		return r
	}
	o := jobOptions(b, job, outDir, opts)
	start := time.Now()
	res, err := Run(ctx, o, job.Command)
	r.Duration = time.Since(start)
	r.Err = err
	if res != nil {
		r.Exit = res.ExitStatus
		r.Files = len(res.Manifest.Files)
		for _, f := range res.Manifest.Files {
			r.Records += f.Records
		}
	} else {
		r.Exit = -1
	}
	r.OK = err == nil && r.Exit == r.Expected
	return r
}

func mergeEnv(base []string, add map[string]string) []string {
	if base == nil {
		base = os.Environ()
	}
	if len(add) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(add))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, replaced := add[k]; !replaced {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out
}

// WriteBatchSummary prints the combined table of a batch run.
func WriteBatchSummary(w io.Writer, results []BatchResult, total int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATUS\tEXIT\tEXPECTED\tDURATION\tFILES\tRECORDS\tDIRECTORY")
	for _, r := range results {
		status := "ok"
		if !r.OK {
			status = "FAILED"
		}
		exit := fmt.Sprint(r.Exit)
		if r.Exit < 0 {
			exit = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2fs\t%d\t%d\t%s\n", r.Job.Name, status, exit, r.Expected,
			r.Duration.Seconds(), r.Files, r.Records, r.Dir)
	}
	tw.Flush()
	failed := 0
	for _, r := range results {
		if !r.OK {
			failed++
			if r.Err != nil {
				fmt.Fprintf(w, "%s: %v\n", r.Job.Name, r.Err)
			}
		}
	}
	fmt.Fprintf(w, "%d of %d jobs ran: %d ok, %d failed", len(results), total, len(results)-failed, failed)
	if skipped := total - len(results); skipped > 0 {
		fmt.Fprintf(w, ", %d not run (use --keep-going to run past failures)", skipped)
	}
	fmt.Fprintln(w)
}

// WriteBatchStopped says that a signal stopped the batch.
func WriteBatchStopped(w io.Writer, sig os.Signal, results []BatchResult, total int) {
	fmt.Fprintf(w, "stopped by %s: %d of %d jobs not started\n", sig, total-len(results), total)
}

// ErrBatchFailed is returned by the CLI when a job failed.
var ErrBatchFailed = errors.New("a batch job failed")
