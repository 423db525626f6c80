package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rocprof-go/rocprof-go/internal/securedir"
)

// ClaimsDir is the hidden directory, beside the files it guards, that holds
// the claims of output prefixes (Claim). It may be deleted once no job that
// writes there runs.
const ClaimsDir = ".rocprof-go-claims"

// Owner is the process that claims an output prefix: the rocprof-go of one
// rank.
type Owner struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Rank is the rank of the launcher that started it ("" outside a
	// launcher); RankVar the variable it was read from.
	Rank    string `json:"rank"`
	RankVar string `json:"rank_variable,omitempty"`
	// Job names the launch (placeholder.Launcher.Job): claims are per job.
	Job string `json:"job"`
}

func (o Owner) String() string {
	s := fmt.Sprintf("pid %d on %s", o.PID, o.Host)
	if o.Rank != "" {
		s = "rank " + o.Rank + " (" + s
		if o.RankVar != "" {
			s += ", " + o.RankVar + "=" + o.Rank
		}
		s += ")"
	}
	return s
}

// ClashError is two processes of one job resolving an output prefix to the
// same files.
type ClashError struct {
	Prefix      string
	First, Then Owner
	ClaimFile   string
}

func (e *ClashError) Error() string {
	return fmt.Sprintf("output clash: %s is the output prefix of two processes of one job: %s wrote it, and %s would "+
		"replace its files. Give every process its own files: put %%rank%% (or %%pid%%) in -o or -d, e.g. "+
		"-o '%%rank%%_results' or -d 'out/%%rank%%' (claim %s; delete it if that job is over)",
		e.Prefix, e.First, e.Then, e.ClaimFile)
}

// Claim claims an output prefix (a path without its extensions) for o,
// before anything is written under it, so that two processes of one job
// never write the same files, whichever writes first: a claim is a file
// named after the prefix and the job in ClaimsDir beside it, created with
// link(2), which fails if it exists. It is kept after the run; a later
// job claims anew. Claiming a prefix already claimed in the same job
// fails with a *ClashError naming both processes when the other is
// another rank, or the same rank still running on this host as another
// process; the same rank run again (a script that runs rocprof-go twice)
// takes the claim over.
func Claim(prefix string, o Owner) error {
	d, err := securedir.MkdirOutput(filepath.Join(filepath.Dir(prefix), ClaimsDir), 0o777)
	if err != nil {
		return fmt.Errorf("output claim: %w", err)
	}
	defer d.Close()
	claim, base := claimPath(prefix, o.Job)
	name := filepath.Base(claim)
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	tmp := tempName(base)
	f, err := d.Create(tmp, 0o666)
	if err != nil {
		return fmt.Errorf("output claim: %w", err)
	}
	defer d.Remove(tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("output claim: %w", err)
	}
	for range 3 {
		err := d.Link(tmp, name)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("output claim: %w", err)
		}
		f, err = d.OpenRegular(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("output claim: %w", err)
		}
		var held Owner
		derr := json.NewDecoder(f).Decode(&held)
		f.Close()
		if derr != nil {
			return fmt.Errorf("output claim %s: %v", claim, derr)
		}
		if held.Job != o.Job {
			// A hash collision of two job names: not this job's claim.
			return d.Rename(tmp, name)
		}
		if held.Rank != o.Rank || held.Host == o.Host && held.PID != o.PID && alive(held.PID) {
			return &ClashError{Prefix: prefix, First: held, Then: o, ClaimFile: claim}
		}
		// This process, or the same rank run again: take the claim over.
		return d.Rename(tmp, name)
	}
	return fmt.Errorf("output claim %s: it keeps changing", claim)
}

// alive reports whether a process of this host exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// claimPath is the claim file of prefix in job, and the prefix's base name
// as the claim uses it.
func claimPath(prefix, job string) (claim, base string) {
	sum := sha256.Sum256([]byte(job))
	base = filepath.Base(prefix)
	if room := maxName - 1 - 16; len(base) > room {
		base = base[:room]
	}
	return filepath.Join(filepath.Dir(prefix), ClaimsDir, base+"@"+hex.EncodeToString(sum[:8])), base
}

// Release removes o's claim of prefix, if it is still o's, and the claims
// directory if nothing else is in it: a run that claimed its prefixes only
// while it runs (not a job's ranks, whose claims outlive each rank) leaves
// nothing behind.
func Release(prefix string, o Owner) {
	claim, _ := claimPath(prefix, o.Job)
	d, err := securedir.MkdirOutput(filepath.Dir(claim), 0o777)
	if err != nil {
		return
	}
	defer d.Close()
	name := filepath.Base(claim)
	f, err := d.OpenRegular(name)
	if err != nil {
		return
	}
	var held Owner
	derr := json.NewDecoder(f).Decode(&held)
	f.Close()
	if derr != nil || held != o {
		return
	}
	_ = d.Remove(name)
	if parent, err := securedir.MkdirOutput(filepath.Dir(prefix), 0o755); err == nil {
		_ = parent.RemoveDir(ClaimsDir) // fails unless empty
		parent.Close()
	}
}
