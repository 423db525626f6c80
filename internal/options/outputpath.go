package options

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/placeholder"
)

// checkOutputPath refuses, before the app runs, an output path that would
// leave the directory the user named (docs/outputs.md, "Placeholders"):
//
//   - a placeholder's value may not climb out of -d or the -o prefix: a
//     ".." component, or an absolute path, made from a variable's value
//     (%env{X}% = ..) or from ROCPROF_TIME_FORMAT/ROCPROF_DATE_FORMAT
//     (%launch_time%, %launch_date%), or a variable whose value names
//     itself;
//   - when -d names the output directory (the option, ROCPROF_OUTPUT_PATH
//     or a job's output_directory), the files (<-d>[/pass_N]/<prefix>_<name>)
//     stay inside it: -o may name sub-directories of -d, and a ".." the
//     prefix itself writes as long as it stays inside (-o a/../b), but not
//     leave it (-o ../x). Without -d the prefix is the user's to place, as
//     in rocprofv3.
//
// The values are this process's (lookup reads its environment, which the
// app inherits); the pipeline expands them again per profiled process,
// where Expand neutralises a value a process changed.
func (c *Config) checkOutputPath(lookup func(string) (string, bool)) error {
	cur := placeholder.Current()
	cur.LookupEnv = lookup
	dir, err := placeholder.ExpandChecked(c.OutputDirectory, cur)
	if err != nil {
		return &UsageError{Option: "-d/--output-directory", Msg: err.Error()}
	}
	prefix := placeholder.Expand(defaultPrefix, cur) // values of one component each
	if c.OutputFile != "" {
		if prefix, err = placeholder.ExpandChecked(c.OutputFile, cur); err != nil {
			return &UsageError{Option: "-o/--output-file", Msg: err.Error()}
		}
	}
	if c.OutputDirectory == "" {
		return nil
	}
	base := filepath.Clean(dir)
	inside := func(p string) bool {
		rel, err := filepath.Rel(base, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	if files := filepath.Join(base, c.Pass.SubDir, prefix+"_"); !inside(files) {
		return &UsageError{Option: "-o/--output-file", Msg: fmt.Sprintf("%q puts the output files at %s*, outside the output directory %s (-d %q): "+
			"a prefix may name sub-directories of -d (e.g. -o run1/out) but not climb out of it; name the directory with -d instead",
			c.OutputFile, files, base, c.OutputDirectory)}
	}
	switch name := c.SummaryOutputFile; name {
	case "", "stdout", "STDOUT", "stderr", "STDERR":
	default:
		if file := filepath.Join(base, c.Pass.SubDir, prefix+"_"+name+".txt"); !inside(file) {
			return &UsageError{Option: "--summary-output-file", Msg: fmt.Sprintf("%q puts the summary at %s, outside the output directory %s (-d %q): "+
				"give a file name (written as <prefix>_<name>.txt in -d), stdout or stderr", name, file, base, c.OutputDirectory)}
		}
	}
	return nil
}

// defaultPrefix is -o's default, as the output writers apply it.
const defaultPrefix = "%hostname%/%pid%"
