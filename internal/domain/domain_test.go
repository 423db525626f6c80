package domain_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// The domain table is the only place a domain is spelled: its variable, its
// --*-trace flag and its option's name, and its bit's number, appear in no
// other source (Go or the injected C/C++) but generated files and tests
// (the options place a switch by its row's Go ID, internal/options/spec.go);
// comments are free. A consumer reads the table instead, so that a new domain is one
// row (make guards runs this).
func TestNoSourceSpellsADomain(t *testing.T) {
	words := map[string]string{} // spelling -> its row
	for _, d := range domain.Switches {
		words[`"`+d.Env+`"`] = d.Option
		if strings.HasSuffix(d.Option, "_trace") {
			words[`"`+d.Option+`"`] = d.Option
			words[`"`+d.Flag()+`"`] = d.Option
			words[`"`+strings.TrimPrefix(d.Flag(), "--")+`"`] = d.Option
		}
	}
	// A bit defined by hand: RPG_DOMAIN_X = 1u << N, or N next to the name.
	bitDef := regexp.MustCompile(`RPG_DOMAIN_[A-Z_]+\s*=|1u?\s*<<\s*[0-9]+\s*,?\s*/\*\s*ROCPROF_`)
	allowed := map[string]bool{
		"internal/domain/domain.go": true, // the table
	}
	// Where an option's name is a file's: the output domains' table
	// (internal/output/model) names a CSV file kernel_trace.csv, rocprofv3's
	// name, which is not the option. Only its rows, and only the name with
	// underscores (a file is never a flag or a variable), are exempt.
	options := map[string]bool{}
	for _, d := range domain.Switches {
		options[`"`+d.Option+`"`] = true
	}
	fileNames := map[string]*regexp.Regexp{
		"internal/output/model/domains.go": regexp.MustCompile(`^\tDom\w+:\s*\{tracing\.Kind\w+, `),
	}
	literal := regexp.MustCompile(`"[^"\n]*"`)
	var found []string
	root := filepath.Join("..", "..")
	for _, dir := range []string{"internal", "cmd", "pkg", "vgpu"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			ext := filepath.Ext(p)
			if allowed[rel] || strings.HasSuffix(p, "_test.go") || strings.Contains(filepath.Base(p), "_gen") || strings.Contains(rel, "testdata") ||
				(ext != ".go" && ext != ".c" && ext != ".cpp" && ext != ".h" && ext != ".hpp") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "*") {
					continue // inside a C comment
				}
				where := rel + ":" + strconv.Itoa(i+1) + ": "
				for _, m := range literal.FindAllString(code(line), -1) {
					if options[m] && fileNames[rel] != nil && fileNames[rel].MatchString(line) {
						continue
					}
					if row, ok := words[m]; ok {
						found = append(found, where+m+" (the domain "+row+")")
					}
				}
				if bitDef.MatchString(line) {
					found = append(found, where+"a domain's bit defined by hand")
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Empty(t, found, "read the domain table (internal/domain) instead; the C side includes rpg_domains_gen.h (go generate ./internal/domain)")
}

// The table is one the injected code can use: every bit is named and in
// rpg_domains' 32, no two domains share a bit or an option, and a domain
// that fills an output domain says what an empty one means.
func TestTableIsConsistent(t *testing.T) {
	bits, options := map[int]string{}, map[string]bool{}
	for _, d := range domain.Switches {
		require.False(t, options[d.Option], "%s twice", d.Option)
		options[d.Option] = true
		require.True(t, strings.HasPrefix(d.Env, "ROCPROF_"), d.Option)
		if d.Refused != "" {
			// A refused switch: nothing reads it or collects it.
			require.Zero(t, d.ReadBy, d.Option)
			require.Zero(t, d.CollectedBy, d.Option)
			require.Equal(t, domain.NoBit, d.Bit, d.Option)
			require.Empty(t, d.Outputs, d.Option)
			require.NotEmpty(t, d.Help, d.Option)
			continue
		}
		require.NotZero(t, d.ReadBy, d.Option)
		require.NotZero(t, d.CollectedBy, d.Option)
		if d.Bit != domain.NoBit {
			require.True(t, d.Bit >= 0 && d.Bit < 32 && d.C != "", d.Option)
			require.Empty(t, bits[d.Bit], "%s and %s share bit %d", bits[d.Bit], d.Option, d.Bit)
			bits[d.Bit] = d.Option
		}
		// A switch is its row's option: spec.go has no line for it.
		if strings.HasSuffix(d.Option, "_trace") {
			require.NotEmpty(t, d.Help, d.Option)
		}
		require.False(t, d.Agents && d.CollectedBy == domain.Shim, "%s: a shim domain loads the shim anyway", d.Option)
		if d.Report != "" {
			require.NotEmpty(t, d.Outputs, d.Option)
			require.True(t, strings.HasPrefix(d.Empty, ": "), d.Option)
		}
	}
}

// code is a line without its comment (// or /* outside a string).
func code(line string) string {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && quoted:
			i++
		case line[i] == '"':
			quoted = !quoted
		case !quoted && (strings.HasPrefix(line[i:], "//") || strings.HasPrefix(line[i:], "/*")):
			return line[:i]
		}
	}
	return line
}
