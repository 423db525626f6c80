package rocprof_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// Profile an app (here on the virtual GPU) and read its kernels back. The
// package documentation and the README show this code.
func ExampleRun() {
	ctx := context.Background()
	res, err := rocprof.Run(ctx, rocprof.Options{
		Args: []string{"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", "out"},
	}, []string{"./app", "--size", "1024"})
	if err != nil {
		log.Fatal(err) // rocprof-go could not run the app
	}
	fmt.Println(res.ExitStatus) // the app's own exit status
	kernels, err := rocprof.ReadKernels(res.Dir, res.Manifest)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range kernels {
		fmt.Println(k.Name, k.DurationNs())
	}
	m, _ := rocprof.LoadManifest("out") // what any later program reads
	fmt.Println(len(m.Files))
}

// A CI gate in Go: eight runs per side, kernels and copies gated.
func ExampleCompare() {
	base := []string{"base-1", "base-2", "base-3", "base-4", "base-5", "base-6", "base-7", "base-8"}
	next := []string{"new-1", "new-2", "new-3", "new-4", "new-5", "new-6", "new-7", "new-8"}
	rep, err := rocprof.Compare(base, next, rocprof.DefaultCompareOptions())
	if err != nil {
		log.Fatal(err)
	}
	if err := rocprof.WriteCompareReport(os.Stdout, rep, "markdown"); err != nil {
		log.Fatal(err)
	}
	if rep.Failed {
		os.Exit(3)
	}
}
