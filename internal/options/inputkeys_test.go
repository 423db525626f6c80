package options

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A job that sets one key twice is refused, naming the key and its lines
// (issue 41: a JSON job with kernel_trace twice silently took the last, as
// Go's and Python's JSON readers do); YAML's reader refuses it too, and
// so does one option spelled both ways (kernel-trace and kernel_trace).
func TestInputFileDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
		return p
	}
	for _, c := range []struct {
		name, doc string
		want      []string
	}{
		{"dup.json", "{\"jobs\": [\n  {\"kernel_trace\": true,\n   \"output_file\": \"a\",\n   \"kernel_trace\": false}\n]}\n",
			[]string{"dup.json: line 4: key \"kernel_trace\" is already set at line 2 of the same object", "remove one"}},
		{"nested.json", "{\"jobs\": [{\"pmc\": [\"SQ_WAVES\"]}, {\"pmc_groups\": [[\"A\"], [\"B\"]], \"pmc\": [\"X\"], \"pmc\": [\"Y\"]}]}",
			[]string{"nested.json: line 1: key \"pmc\" is already set at line 1"}},
		{"top.json", "{\"jobs\": [{\"pmc\": [\"A\"]}], \"jobs\": [{\"pmc\": [\"B\"]}]}", []string{"key \"jobs\" is already set"}},
		{"dup.yaml", "jobs:\n  - kernel_trace: true\n    kernel_trace: false\n",
			[]string{"dup.yaml is not valid YAML", "line 3: mapping key \"kernel_trace\" already defined at line 2"}},
		{"spelled.json", `{"jobs": [{"kernel-trace": true, "kernel_trace": false}]}`,
			[]string{"spelled.json: job 1 sets \"kernel_trace\" twice (as \"kernel-trace\" and \"kernel_trace\", one option): keep one"}},
		{"spelled.yaml", "jobs:\n  - {pmc: [A]}\n  - {output-file: a, output_file: b}\n",
			[]string{"spelled.yaml: job 2 sets \"output_file\" twice"}},
	} {
		_, err := resolveEnv(nil, "-i", write(c.name, c.doc), "--", "app")
		require.Error(t, err, c.name)
		for _, w := range c.want {
			require.Contains(t, err.Error(), w, c.name)
		}
	}
	// Equal keys in different objects are fine.
	p, err := resolveEnv(nil, "-i", write("ok.json", `{"jobs": [{"pmc": ["SQ_WAVES"], "output_file": "a"}, {"pmc": ["GRBM_COUNT"], "output_file": "b", "extra": {"x": 1, "y": [{"x": 2}]}}]}`), "--", "app")
	require.ErrorContains(t, err, `unknown key "extra"`)
	require.Nil(t, p)
	p, err = resolveEnv(nil, "-i", write("ok2.json", `{"jobs": [{"pmc": ["SQ_WAVES"], "output_file": "a"}, {"pmc": ["GRBM_COUNT"], "output_file": "b"}]}`), "--", "app")
	require.NoError(t, err)
	require.Len(t, p.Passes, 2)
}
