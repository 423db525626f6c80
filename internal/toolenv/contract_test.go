package toolenv_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/toolenv"
)

// The option table is the only place that spells a contract variable:
// every other source, Go or the injected C/C++, uses the generated names,
// so the CLI and the injected code cannot drift apart.
func TestNoSourceSpellsAContractVariable(t *testing.T) {
	contract := map[string]bool{}
	for _, v := range toolenv.All {
		contract[v] = true
	}
	sources := map[string]bool{ // the tables themselves (options and domains)
		"internal/options/spec.go": true, "internal/options/toolvars.go": true, "internal/domain/domain.go": true,
	}
	literal := regexp.MustCompile(`"(ROC[A-Z_]+)"`)
	var found []string
	root := filepath.Join("..", "..")
	for _, dir := range []string{"internal", "cmd", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			ext := filepath.Ext(p)
			if sources[rel] || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "_gen") || strings.Contains(rel, "testdata") ||
				(ext != ".go" && ext != ".c" && ext != ".cpp" && ext != ".h" && ext != ".hpp") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(data), "\n") {
				for _, m := range literal.FindAllStringSubmatch(line, -1) {
					if contract[m[1]] && !strings.HasPrefix(strings.TrimSpace(line), "//") {
						found = append(found, rel+":"+strconv.Itoa(i+1)+": "+m[1])
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Empty(t, found, "use the generated names (internal/toolenv in Go, RPG_ENV_* from rpg_env_gen.h in C)")
}

// Every variable the injected code reads is in the C header, and nothing
// else: the header is the injected side's whole view of the contract.
func TestHeaderHoldsWhatTheInjectedCodeReads(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("..", "hsa", "preload", "rpg_env_gen.h"))
	require.NoError(t, err)
	for _, v := range options.ToolVars() {
		macro := "\"" + v.Name + "\""
		if v.ReadBy != 0 {
			require.Contains(t, string(h), macro, v.Name)
		} else {
			require.NotContains(t, string(h), macro, v.Name)
		}
	}
	var replaced []string
	for _, v := range options.ToolVars() {
		if v.ReadBy != 0 && v.SetBy == options.SetByCLI {
			replaced = append(replaced, v.Name)
		}
	}
	require.Equal(t, replaced, toolenv.Replaced)
	require.NotContains(t, toolenv.Replaced, toolenv.GoShimDebug, "a debugging switch set by hand passes through")
}
