package rocprof_test

import (
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// The public API names every type a user meets: a function, field or
// element of an internal package's type must be one pkg/rocprof gives a
// name to (an alias), so that a program outside this module can declare,
// construct and pass it.
func TestPublicAPIExposesNoUnnamedInternalTypes(t *testing.T) {
	named := map[reflect.Type]bool{}
	roots := []any{rocprof.Options{}, rocprof.Result{}, rocprof.Manifest{}, rocprof.ManifestAgent{}, rocprof.ManifestPass{},
		rocprof.ManifestFile{}, rocprof.FormatBytes{}, rocprof.ManifestRank{}, rocprof.Job{}, rocprof.DomainLoss{}, rocprof.RecordLoss{}, rocprof.NoGPU{}, rocprof.UnprofiledProcess{}, rocprof.DrainReport{}, rocprof.TruncatedNames{}, rocprof.LostDomainsError{}, rocprof.RecordsLostError{},
		rocprof.Batch{}, rocprof.BatchJob{}, rocprof.BatchResult{}, rocprof.BatchJobError{}, rocprof.Kernel{},
		rocprof.CompareOptions{}, rocprof.CompareReport{}, rocprof.CompareRow{}, rocprof.CompareSide{},
		rocprof.CompareStatus(""), rocprof.CompareMetric(""), rocprof.CompareDomain(""), rocprof.CompareBasis(""),
		rocprof.AttachReport{}, rocprof.AttachProcess{}, rocprof.AttachSkipped{}, rocprof.AlreadyProfiledError{}, rocprof.NoRuntimeError{}}
	for _, r := range roots {
		named[reflect.TypeOf(r)] = true
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Array || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if seen[ty] {
			return
		}
		seen[ty] = true
		if strings.Contains(ty.PkgPath(), "/internal/") && !named[ty] {
			t.Errorf("%s is %s, which pkg/rocprof does not name: add an alias", path, ty)
		}
		if ty.Kind() != reflect.Struct || !strings.HasPrefix(ty.PkgPath(), "github.com/rocprof-go/") {
			return
		}
		for i := 0; i < ty.NumField(); i++ {
			if f := ty.Field(i); f.IsExported() {
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, r := range roots {
		walk(reflect.TypeOf(r), reflect.TypeOf(r).Name())
	}

	// Functions: their signatures name only pkg/rocprof's and the
	// standard library's types.
	out, err := exec.Command("go", "doc", "-short", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	qualified := regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`)
	std := map[string]bool{"context": true, "io": true, "os": true, "time": true, "zerolog": true}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "func ") {
			continue
		}
		for _, m := range qualified.FindAllStringSubmatch(line, -1) {
			if !std[m[1]] {
				t.Errorf("%s: takes or returns a %s type that users cannot name", line, m[1])
			}
		}
	}
}
