package options

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The output stays inside the directory the user named (issue 41): a
// variable's value (%env{X}% = ..) or ROCPROF_TIME_FORMAT that would climb
// out of -d, or an -o prefix that leaves -d, is refused before the app
// runs, naming the value and the variable; sub-directories, a ".." that
// stays inside, and -o without -d are the user's, as in rocprofv3.
func TestOutputPathStaysInsideTheOutputDirectory(t *testing.T) {
	env := map[string]string{"UP": "..", "SUB": "run1", "TAGGED": "%tag%-trace-inp-yaml",
		"ROCPROF_TIME_FORMAT": "/../../%H"}
	base := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-d", base, "-o", "%env{UP}%/x"}, `option -o/--output-file: environment variable UP=".." makes "%env{UP}%/x" expand to "../x", outside the directory it names`},
		{[]string{"-d", base + "/%env{UP}%"}, `option -d/--output-directory: environment variable UP=".."`},
		{[]string{"-o", "$ENV{UP}/x"}, `environment variable UP=".."`},
		{[]string{"-d", base, "-o", "%launch_time%/x"}, `ROCPROF_TIME_FORMAT="/../../%H" makes "%launch_time%/x" expand to`},
		{[]string{"-d", base, "-o", "../x"}, `option -o/--output-file: "../x" puts the output files at ` + filepath.Dir(base) + `/x_*, outside the output directory ` + base},
		{[]string{"-d", base, "-o", "a/../../x"}, "outside the output directory"},
		{[]string{"-d", base, "-o", "out", "--summary", "--summary-output-file", "../../../x"},
			`option --summary-output-file: "../../../x" puts the summary at ` + filepath.Dir(base) + `/x.txt, outside the output directory`},
	} {
		_, err := resolveEnv(env, append(append([]string{"--kernel-trace"}, c.args...), "--", "app")...)
		require.ErrorContains(t, err, c.want, c.args)
	}
	// ROCPROF_OUTPUT_PATH names -d as the option does.
	_, err := resolveEnv(map[string]string{"ROCPROF_OUTPUT_PATH": base}, "--kernel-trace", "-o", "../x", "--", "app")
	require.ErrorContains(t, err, "outside the output directory")

	for _, args := range [][]string{
		{"-d", base, "-o", "%env{SUB}%/out"},
		{"-d", base, "-o", "run1/out"},
		{"-d", base, "-o", "a/../b"},
		{"-d", base, "-o", ".."}, // files named .._kernel_trace.csv, inside -d
		{"-d", base + "/%env{TAGGED}%", "-o", "out"},
		{"-o", "../x"}, // no -d: the prefix is the user's to place
		{"-d", "../elsewhere", "-o", "out"},
		{"-d", base, "--summary", "--summary-output-file", "sum"},
		{"-d", base, "-o", "out", "--summary", "--summary-output-file", "../sum"}, // out_../sum.txt: inside
	} {
		_, err := resolveEnv(env, append(append([]string{"--kernel-trace"}, args...), "--", "app")...)
		require.NoError(t, err, args)
	}
}
