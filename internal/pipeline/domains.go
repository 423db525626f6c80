package pipeline

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// domainLosses reads the processes' status strings against what the pass
// asked for. A process that initialised the HSA runtime without the shim
// attached lost every requested shim domain (unless hsa_init failed: its
// GPU stack found no GPU, which noGPUProcesses reports); a domain the shim reported
// unavailable on the process's runtime is lost when it was asked for by
// name, and only unavailable (a notice) when an aggregate option implied it
// or the pass attached to running processes (docs/attach.md).
// The shim's domains are the domain table's (internal/domain).
func domainLosses(c *options.Config, statuses []output.ProcessStatus) (lost, unavailable []DomainLoss) {
	var requested []domain.Switch
	var names []string
	for _, d := range domain.Switches {
		if d.CollectedBy == domain.Shim && c.Collects(d) {
			requested = append(requested, d)
			names = append(names, d.Option)
		}
	}
	if len(requested) == 0 {
		return nil, nil
	}
	for _, p := range statuses {
		_, initialised := p.Status[tracing.StatusHSAInit]
		_, attached := p.Status[tracing.StatusShimAttached]
		if _, failed := p.Status[tracing.StatusHSAInitFailed]; failed && !attached {
			continue // no GPU, not a missing shim (noGPUProcesses)
		}
		if initialised && !attached {
			why, declined := p.Status[tracing.StatusShimDeclined]
			if declined {
				why = "the HSA runtime's tool API is one rocprof-go does not know (" + why + ")"
			} else {
				why = "the HSA runtime did not load rocprof-go's shim (HSA_TOOLS_LIB): no kernels, copies, HSA calls or counters could be recorded"
			}
			lost = append(lost, DomainLoss{PID: p.PID, Domains: names, Reason: why})
			continue
		}
		byReason := map[string][]string{}
		explicit := map[string]bool{}
		for _, d := range requested {
			why, ok := p.Status[tracing.StatusUnavailable|uint64(d.Status)]
			if d.Status == domain.NoBit || !ok {
				continue
			}
			byReason[why] = append(byReason[why], d.Option)
			// Attached, a process's runtime state is not the run's
			// choice (one that had not initialised HSA yet, a launcher
			// of GPU workers that runs none itself): said, not a loss.
			explicit[why] = explicit[why] || c.AskedByName(d) && !c.Attaching()
		}
		reasons := make([]string, 0, len(byReason))
		for why := range byReason {
			reasons = append(reasons, why)
		}
		sort.Strings(reasons)
		for _, why := range reasons {
			l := DomainLoss{PID: p.PID, Domains: byReason[why], Reason: why}
			if explicit[why] {
				lost = append(lost, l)
			} else {
				unavailable = append(unavailable, l)
			}
		}
	}
	return lost, unavailable
}

// LostDomainsError is a run whose app ran but some requested domains were
// not collected (listed in run.json's lost_domains).
type LostDomainsError struct {
	Lost []DomainLoss
}

func (e *LostDomainsError) Error() string {
	var b strings.Builder
	b.WriteString("requested domains were not collected:")
	for _, l := range e.Lost {
		fmt.Fprintf(&b, "\n  pid %d: %s: %s", l.PID, strings.Join(l.Domains, ", "), l.Reason)
	}
	b.WriteString("\n  (the other outputs are complete; run.json lists these under lost_domains)")
	return b.String()
}

// noteUnavailable prints the domains an aggregate option implied that a
// runtime cannot give.
func noteUnavailable(w io.Writer, u []DomainLoss) {
	for _, l := range u {
		fmt.Fprintf(w, "rocprof-go: note: pid %d: %s not available: %s\n", l.PID, strings.Join(l.Domains, ", "), l.Reason)
	}
}

// noteTruncated tells of names and messages cut to fit a record.
func noteTruncated(w io.Writer, t []TruncatedNames) {
	for _, p := range t {
		fmt.Fprintf(w, "rocprof-go: note: pid %d: %d names or messages were longer than the largest record (~64 KiB) and were cut (run.json truncated_names)\n", p.PID, p.Count)
	}
}

// RecordsLostError is a run whose spools did not bring every record to the
// outputs: records dropped in the app (the spool's file system was full),
// torn or in damaged chunks, or whole spool files that could not be read.
type RecordsLostError struct {
	Records []RecordLoss
	Skipped []string
}

func (e *RecordsLostError) Error() string {
	var b strings.Builder
	var dropped, torn uint64
	var capped, stored bool
	var stopped uint64
	b.WriteString("records were not kept:")
	for _, r := range e.Records {
		if tracing.Stopped(r.StoreError) {
			stopped += r.Dropped
		}
		parts := tracing.StoreLosses(r.Dropped, r.LostChunks, r.StoreError)
		if r.LostChunks > 0 {
			stored = true
		}
		if r.Torn > 0 {
			parts = append(parts, fmt.Sprintf("%d torn (never published)", r.Torn))
		}
		if r.InvalidChunks > 0 {
			parts = append(parts, fmt.Sprintf("%d damaged spool chunks (their later records)", r.InvalidChunks))
		}
		if r.PCSamplesLost > 0 {
			parts = append(parts, fmt.Sprintf("%d PC samples the runtime reported lost (its sampling buffers were full: raise --pc-sampling-interval)", r.PCSamplesLost))
		}
		if r.PerfettoCapped > 0 {
			parts = append(parts, fmt.Sprintf("%d left out of the Perfetto trace at its --perfetto-buffer-size", r.PerfettoCapped))
			capped = true
		}
		fmt.Fprintf(&b, "\n  pid %d: %s", r.PID, strings.Join(parts, ", "))
		dropped += r.Dropped
		torn += r.Torn
	}
	for _, s := range e.Skipped {
		fmt.Fprintf(&b, "\n  spool %s (unreadable: every record of that process)", s)
	}
	if dropped > stopped || len(e.Skipped) > 0 || stored {
		b.WriteString("\n  (the spool's file system was full or too small: free space there, or put the spools on a file system with room with " + launchSpoolRootEnv + "=DIR)")
	}
	if capped {
		b.WriteString("\n  (the Perfetto trace was full: raise --perfetto-buffer-size, or leave it out for a trace without a cap; the other formats hold every record)")
	}
	b.WriteString("\n  (everything else is in the outputs; run.json lists these under lost_records and skipped_spools)")
	return b.String()
}

const launchSpoolRootEnv = launch.SpoolRootEnv

// collectionLosses is the run's error for what it did not collect: a GPU
// stack that found no GPU, lost domains, lost records and the kernel
// dispatches an attach could not time, or nil.
func collectionLosses(m *Manifest) error {
	var errs []error
	if len(m.NoGPU) > 0 {
		errs = append(errs, &NoGPUError{Processes: m.NoGPU, Virtual: len(m.Agents) > 0 && m.Agents[0].Virtual})
	}
	if lost := lostUnprofiled(m.UnprofiledProcesses); len(lost) > 0 {
		errs = append(errs, &UnprofiledError{Processes: lost})
	}
	if len(m.LostDomains) > 0 {
		errs = append(errs, &LostDomainsError{Lost: m.LostDomains})
	}
	if len(m.LostRecords) > 0 || len(m.SkippedSpools) > 0 {
		errs = append(errs, &RecordsLostError{Records: m.LostRecords, Skipped: m.SkippedSpools})
	}
	if err := m.Attach.LostError(); err != nil { // kernel dispatches of the attach window
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// recordLosses lists the processes whose spools lost records, and the spool
// files the writer could not read.
func recordLosses(res *output.Result) ([]RecordLoss, []string) {
	capped := map[int32]uint64{}
	for _, g := range res.Groups {
		for pid, n := range g.PerfettoCapped {
			capped[pid] += n
		}
	}
	var lost []RecordLoss
	for _, p := range res.Processes {
		if p.Dropped > 0 || p.Torn > 0 || p.Invalid > 0 || capped[p.PID] > 0 || p.PCSamplesLost > 0 || p.LostChunks > 0 {
			r := RecordLoss{PID: int(p.PID), Dropped: p.Dropped, Torn: p.Torn, InvalidChunks: p.Invalid,
				PerfettoCapped: capped[p.PID], PCSamplesLost: p.PCSamplesLost, LostChunks: p.LostChunks}
			if p.Dropped > 0 || p.LostChunks > 0 {
				r.StoreError = p.StoreError
			}
			lost = append(lost, r)
		}
	}
	return lost, res.Skipped
}
