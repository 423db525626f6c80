package output

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// parquetCheck reads Parquet files with parquet-go (a separate module, so
// the reader shares no code with the Arrow writer) and returns, per file,
// rows, the sum of duration_ns, the codecs and whether every string column
// is dictionary-encoded.
type pqFileCheck struct {
	rows, durationSum uint64
	codecs            string
	dict              bool
}

var pqCheckLine = regexp.MustCompile(`^(\S+) rows=(\d+) duration_sum=(\d+) codecs=(\S*) dict=(true|false)$`)

func parquetCheck(t *testing.T, files ...string) map[string]pqFileCheck {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "."}, files...)...)
	cmd.Dir = "parquetcheck"
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "%s", stderr)
	res := map[string]pqFileCheck{}
	for _, line := range regexp.MustCompile(`\n`).Split(string(out), -1) {
		if line == "" {
			continue
		}
		m := pqCheckLine.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		rows, _ := strconv.ParseUint(m[2], 10, 64)
		sum, _ := strconv.ParseUint(m[3], 10, 64)
		res[filepath.Base(m[1])] = pqFileCheck{rows, sum, m[4], m[5] == "true"}
	}
	return res
}

func parquetFiles(t *testing.T, prefix string) map[domain]string {
	files := map[domain]string{}
	for d := domain(0); d < numDomains; d++ {
		p := parquetPath(prefix, d, &Options{})
		if _, err := os.Stat(p); err == nil {
			files[d] = p
		}
	}
	return files
}

func TestParquetIndependentReader(t *testing.T) {
	in := fixtureInput(t, []int32{100, 200}, 16)
	prefix := tempPrefix(t)
	require.NoError(t, WriteParquet(prefix, in))
	files := parquetFiles(t, prefix)
	require.Len(t, files, int(numDomains))
	var paths []string
	for _, p := range files {
		paths = append(paths, p)
	}
	got := parquetCheck(t, paths...)
	st, err := collectStats(in)
	require.NoError(t, err)
	want := fixtureCounts(16)
	for d, p := range files {
		c := got[filepath.Base(p)]
		require.Equal(t, 2*want[d], c.rows, d.String())
		require.Equal(t, "ZSTD", c.codecs, d.String())
		require.True(t, c.dict, "%s: string columns dictionary-encoded", d)
		if d != domCounter {
			require.Equal(t, st[d].Total.Sum, c.durationSum, d.String())
		}
	}
	require.Equal(t, prefix+"_kernels.parquet", files[domKernel])
}

func TestParquetHiveLayout(t *testing.T) {
	in := fixtureInput(t, []int32{100}, 8)
	in.Options.ParquetHive, in.Options.ParquetRank = true, 3
	dir := t.TempDir()
	require.NoError(t, WriteParquet(filepath.Join(dir, "out"), in))
	_, err := os.Stat(filepath.Join(dir, "domain=kernels", "rank=3", "out.parquet"))
	require.NoError(t, err)
}
