package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
)

// localRunJob is the job of the claims a run outside a launcher makes.
const localRunJob = "rocprof-go run"

// RunClashError is a run whose output files another rocprof-go run, still
// running on this host, writes too (one -o and -d, no %pid%).
type RunClashError struct{ *atomicfile.ClashError }

func (e *RunClashError) Error() string {
	return fmt.Sprintf("output clash: %s* are the output files of another rocprof-go run still running (pid %d on %s): "+
		"the run that ends last would replace the other's files. Give each run its own files: put %%pid%% in -o "+
		"(e.g. -o '%%pid%%_results') or choose another -d (claim %s; delete it if no such run is going on)",
		e.Prefix, e.First.PID, e.First.Host, e.ClaimFile)
}

// claimRunPrefixes claims, once the output directories exist and before
// the app starts, each pass's output prefix that every process of the run
// resolves alike (-o out, no %pid%), for this rocprof-go while it runs
// (atomicfile.Claim, the per-prefix claim ranks use). A second run started
// with the same -o and -d while this one runs is refused before its app
// starts, instead of both writing the same names and the later replacing
// the earlier's files (with run.json listing both). A run after this one
// ended takes the claim over: running again into the same names is
// replacing one's own results, as with rocprofv3. Runs under a launcher
// claim per job and rank as they write (claimOutputs). release removes the
// claims (a killed run leaves them; the next run takes them over).
func claimRunPrefixes(plan *options.Plan) (release func(), err error) {
	var claimed []string
	release = func() {
		for _, p := range claimed {
			atomicfile.Release(p, localOwner())
		}
	}
	if placeholder.LauncherOf(os.LookupEnv).Name != "" {
		return release, nil
	}
	owner := localOwner()
	cur := placeholder.Current()
	for _, cfg := range plan.Passes {
		prefix := cfg.OutputFile
		if prefix == "" {
			prefix = output.DefaultPrefixTemplate
		}
		dir := launch.PassDir(cfg)
		if placeholder.IsPerProcess(dir) || placeholder.IsPerProcess(prefix) {
			continue // each process has its own names
		}
		p := filepath.Join(placeholder.Expand(dir, cur), placeholder.Expand(prefix, cur))
		if err := atomicfile.Claim(p, owner); err != nil {
			release()
			var ce *atomicfile.ClashError
			if errors.As(err, &ce) {
				return nil, &RunClashError{ce}
			}
			return nil, err
		}
		claimed = append(claimed, p)
	}
	return release, nil
}

// localOwner is this rocprof-go, as the owner of its run's claims.
func localOwner() atomicfile.Owner {
	host, err := os.Hostname()
	if err != nil {
		host = "UNKNOWN_HOSTNAME"
	}
	return atomicfile.Owner{Host: host, PID: os.Getpid(), Job: localRunJob}
}
