package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/analysis"
	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// rescuedFormats are the formats every rescued run was asked for, when
// they agree (else none: -f is needed). Only rescues of this user are
// found (launch.FindUnconverted), so no other user's manifest chooses them.
func rescuedFormats(us []launch.Unconverted) []string {
	var f []string
	first := true
	for _, u := range us {
		if u.Orphan {
			continue // no manifest: the formats it was asked for are unknown
		}
		if first {
			f, first = u.Manifest.Formats, false
		} else if !slices.Equal(f, u.Manifest.Formats) {
			return nil
		}
	}
	return slices.Clone(f)
}

// setRescuedDefaults takes -d and -o, when they were not given, from the
// rescued runs when they all agree, so that convert writes the files the
// ranks would have written. Nothing read from a manifest chooses where to
// write beyond that: the directory is the one the rescues are in (the
// run's output directory, named by -i), never the path a manifest gives,
// and the file prefix must be a plain name in it (no "/", not "." or
// ".."), else convert asks for -o.
func setRescuedDefaults(cmd *cobra.Command, opt *convert.Options, us []launch.Unconverted) error {
	// Orphaned run directories have no manifest: -d and -o are unknown.
	us = slices.DeleteFunc(slices.Clone(us), func(u launch.Unconverted) bool { return u.Orphan })
	if len(us) == 0 {
		return nil
	}
	dir, file := us[0].OutputDir, us[0].Manifest.OutputFile
	for _, u := range us {
		// A -d with placeholders wrote below the directory the rescue is
		// in: not known here.
		if u.OutputDir != dir || strings.ContainsAny(u.Manifest.OutputDir, "%{$") {
			dir = ""
		}
		if u.Manifest.OutputFile != file {
			file = ""
		}
	}
	if !cmd.Flags().Changed("output-directory") && dir != "" {
		opt.Dir = dir
	}
	if !cmd.Flags().Changed("output-file") && file != "" {
		if file == "." || file == ".." || strings.ContainsAny(file, "/\x00") {
			return fmt.Errorf("the rescue in %s names the output file prefix %q, which is not a file name in the output directory: give the prefix with -o PREFIX",
				launch.Printable(us[0].Dir), launch.Printable(file))
		}
		opt.Prefix = file
	}
	return nil
}

// rescuedRecords counts the records of a rescued run's spools (strings,
// the catalogue's, aside), and the chunks of cut-short copies.
func rescuedRecords(u launch.Unconverted) (records uint64, torn uint64) {
	for _, p := range append(slices.Clone(u.Spools), u.Partial...) {
		r, err := tracing.Open(p)
		if err != nil {
			continue
		}
		for r.Next() {
		}
		st := r.Stats()
		records += st.Records - st.Count(tracing.KindString)
		torn += st.Torn
		r.Close()
	}
	return records, torn
}

// reportRescued says which ranks were recovered, and fails when a rescue
// was cut short (its records past the copied part are lost) or could not
// be read (unread: a damaged manifest).
func reportRescued(w io.Writer, us []launch.Unconverted, unread []string) error {
	var cut, running []string
	for _, u := range us {
		n, torn := rescuedRecords(u)
		m := &u.Manifest
		status := ""
		if u.Orphan {
			status = fmt.Sprintf("; its app was pid %d", m.AppPID)
			if u.AppRunning {
				status += " and still runs"
				running = append(running, fmt.Sprintf("%s: its app (pid %d) still runs: the records it writes from now on are not converted; convert again once it has exited",
					u.Label(), m.AppPID))
			}
		} else if m.AppExitStatus != 0 {
			status = fmt.Sprintf("; its app exited with status %d%s", m.AppExitStatus, signalSuffix(m.AppExitStatus))
		}
		if torn > 0 {
			status += fmt.Sprintf("; %d torn records (the app died writing them)", torn)
		}
		fmt.Fprintf(w, "rocprof-go: recovered %s: %d records (%s, from %s)%s\n", u.Label(), n, launch.Printable(m.Reason), launch.Printable(u.Dir), status)
		if !u.Complete() {
			cut = append(cut, fmt.Sprintf("%s: rocprof-go was killed while copying its spools to %s: the %d records read are converted, the rest of its records are lost (they may still be on %s in %s)",
				u.Label(), launch.Printable(u.Dir), n, launch.Printable(m.Host), launch.Printable(m.RunDir)))
		}
	}
	if len(us) > 0 {
		fmt.Fprintf(w, "rocprof-go: delete %s once the converted files are where you want them (summary and convert read it again otherwise)\n", launch.Printable(rescuedTop(us)))
	}
	var errs []string
	if len(unread) > 0 {
		errs = append(errs, fmt.Sprintf("%d rescue(s) could not be read, their records are not converted: %s (repair or remove them; the others were converted)",
			len(unread), strings.Join(unread, "; ")))
	}
	if len(cut) > 0 {
		errs = append(errs, "records were lost: "+strings.Join(cut, "; "))
	}
	if len(running) > 0 {
		errs = append(errs, "records are still being written: "+strings.Join(running, "; "))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// rescuedTop names the hidden directories the rescues are in.
func rescuedTop(us []launch.Unconverted) string {
	var tops []string
	for _, u := range us {
		if !slices.Contains(tops, u.Top) {
			tops = append(tops, u.Top)
		}
	}
	return strings.Join(tops, " and ")
}

// warnRescues says what FindUnconverted passed over.
func warnRescues(w io.Writer, rec *launch.Recovery) {
	for _, s := range rec.Warnings {
		fmt.Fprintln(w, "rocprof-go: warning: "+s)
	}
	for _, s := range rec.Unread {
		fmt.Fprintln(w, "rocprof-go: warning: "+s+": its records are not converted")
	}
}

// noRescueError is an input that holds hidden rescue directories but none
// of this user's that could be read.
func noRescueError(in string, rec *launch.Recovery) error {
	why := append(slices.Clone(rec.Warnings), rec.Unread...)
	if len(why) == 0 {
		return fmt.Errorf("%s holds no rescue: nothing converted", launch.Printable(in))
	}
	return fmt.Errorf("%s holds no rescue of yours that can be read (%s): nothing converted", launch.Printable(in), strings.Join(why, "; "))
}

func signalSuffix(status int) string {
	names := map[int]string{6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM", 7: "SIGBUS", 8: "SIGFPE", 2: "SIGINT", 1: "SIGHUP"}
	if status > 128 {
		if n, ok := names[status-128]; ok {
			return " (" + n + ")"
		}
	}
	return ""
}

// withRescued adds to summary's inputs the data of the ranks rescued in
// them (DIR/.rocprof-go-unconverted), converted to CSV in a temporary
// directory, and says which ranks were recovered. An output directory
// that holds nothing else is then read through them alone.
func withRescued(w io.Writer, inputs []string) ([]string, func(), error) {
	var out []string
	var tmps []string
	cleanup := func() {
		for _, d := range tmps {
			os.RemoveAll(d)
		}
	}
	for _, in := range inputs {
		rec, ok, err := launch.FindUnconverted(in)
		if err != nil {
			return nil, cleanup, err
		}
		us := rec.Found
		if !ok || len(us) == 0 {
			rec.Close()
			if len(rec.Unread) > 0 {
				return nil, cleanup, noRescueError(in, rec)
			}
			warnRescues(w, rec)
			out = append(out, in)
			continue
		}
		warnRescues(w, rec)
		err = func() error {
			defer rec.Close()
			tmp, err := os.MkdirTemp("", "rocprof-go-recovered-")
			if err != nil {
				return err
			}
			tmps = append(tmps, tmp)
			opt := convert.Options{Formats: []output.Format{output.FormatCSV}, Dir: tmp, Prefix: "recovered", AgentIndex: "relative"}
			for _, u := range us {
				opt.Spools = append(opt.Spools, u.Spools...)
				opt.Spools = append(opt.Spools, u.Partial...)
			}
			if _, err := convert.Run(nil, opt); err != nil {
				return fmt.Errorf("recovering %s: %w", launch.Printable(rescuedTop(us)), err)
			}
			if err := reportRescued(w, us, rec.Unread); err != nil {
				return err
			}
			// The directory's own files, when it has any beside the rescue,
			// but not a rescued rank's: the files it wrote before it was
			// killed are in the rescue too.
			if src, err := analysis.Resolve(in); err == nil {
				for _, f := range append(src.Databases, src.CSVFiles...) {
					if !rescuedFile(us, filepath.Base(f)) && !rescuedRun(us, src.Writers[f]) {
						out = append(out, f)
					}
				}
			}
			out = append(out, tmp)
			return nil
		}()
		if err != nil {
			return nil, cleanup, err
		}
	}
	return out, cleanup, nil
}

// rescuedFile reports whether an output file name is one a rescued run
// would have written (its -o prefix with the rank's values).
func rescuedFile(us []launch.Unconverted, name string) bool {
	for _, u := range us {
		m := &u.Manifest
		p := strings.NewReplacer("%rank%", m.Rank, "%pid%", strconv.Itoa(m.AppPID), "%hostname%", m.Host, "%size%", m.Size).Replace(m.OutputFile)
		if p == "" || strings.Contains(p, "%") {
			continue
		}
		if strings.HasPrefix(name, filepath.Base(p)+"_") {
			return true
		}
	}
	return false
}
