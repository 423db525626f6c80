package options

import (
	"os"
	"path/filepath"
	"testing"
)

// The fuzz targets below run their seeds in every `go test`; `make fuzz`
// runs them for real. They assert the parsers never panic and that their
// errors are the documented kinds.

func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"--kernel-trace\x00--\x00app", "--sys-trace\x00--hsa-trace=no", "-f\x00csv\x00json\x00-T",
		"--pmc\x00A\x00B,C\x00--\x00x", "-MT", "-Mz", "--kernel-trace\x00maybe", "-d", "--virtual-gpu\x00gfx908",
		"--timeout\x001s", "-P\x000:1:1", "--att", "-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		var args []string
		start := 0
		for i := 0; i <= len(joined); i++ {
			if i == len(joined) || joined[i] == 0 {
				args = append(args, joined[start:i])
				start = i + 1
			}
		}
		cl, err := ParseArgs(args)
		if err != nil {
			if _, ok := err.(*UsageError); !ok {
				t.Fatalf("ParseArgs(%q) returned %T, want *UsageError", args, err)
			}
			return
		}
		_, _ = Resolve(cl, Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	})
}

func FuzzReadInput(f *testing.F) {
	for _, s := range []struct{ ext, text string }{
		{".txt", "pmc: SQ_WAVES\npmc: A B # c\n"},
		{".yaml", "jobs:\n  - pmc: [SQ_WAVES]\n    kernel_trace: true\n"},
		{".json", `{"jobs": [{"pmc_groups": [["A"], ["B"]], "pmc_group_interval": 2}]}`},
		{".yaml", "jobs: 3\n"},
		{".json", `{"jobs": [{"kernel_iteration_range": "[1-3]"}]}`},
	} {
		f.Add(s.ext, s.text)
	}
	f.Fuzz(func(t *testing.T, ext, text string) {
		switch ext {
		case ".txt", ".yaml", ".yml", ".json":
		default:
			return
		}
		path := filepath.Join(t.TempDir(), "in"+ext)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		in, err := ReadInput(path)
		if err != nil {
			return
		}
		for i, job := range in.Jobs {
			_, _ = applyJob(&Config{}, job, "job "+string(rune('0'+i%10)))
		}
	})
}

func FuzzIterationRanges(f *testing.F) {
	for _, s := range []string{"[1, 3, 5, [8-12]]", "[11-14], [4-5]", "[[3-6], 1, 13]", "x", "5-1", "-", "[]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ranges, err := ParseIterationRanges([]string{s})
		if err != nil {
			return
		}
		for _, r := range ranges {
			if r.First == 0 || r.Last < r.First {
				t.Fatalf("%q gave invalid range %+v", s, r)
			}
		}
	})
}
