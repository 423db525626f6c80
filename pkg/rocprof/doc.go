// Package rocprof profiles an application with rocprof-go from a Go program
// and reads the results back, without shelling out to the CLI. It and the
// CLI are two fronts of the same run pipeline (internal/pipeline): a Run
// here is exactly a `rocprof-go` run with the same options.
//
//	res, err := rocprof.Run(ctx, rocprof.Options{
//		Args: []string{"--kernel-trace", "-f", "csv", "-d", "out", "--virtual-gpu"},
//	}, []string{"./app", "--size", "1024"})
//	if err != nil { ... }          // rocprof-go could not run the app
//	fmt.Println(res.ExitStatus)      // the app's own exit status
//	kernels, err := rocprof.ReadKernels(res.Dir, res.Manifest)
//
// (ExampleRun is this code, compiled with the tests.) Compare does what
// `rocprof-go compare` does (ExampleCompare).
//
// A program built outside this repository finds the libraries rocprof-go
// injects through ROCPROF_GO_LIBDIR (a `make build`'s build/lib, with the
// virtual GPU's library beside them) or, when it is unset, from the
// rocprof-go command on PATH, which unpacks its embedded copies.
//
// Every run writes a manifest, run.json, at the top of its output directory:
// scripts and programs read it instead of globbing for files. Every file a
// run writes (run.json included) appears under its name only when complete
// and never through a symlink (internal/atomicfile).
package rocprof
