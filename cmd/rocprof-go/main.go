// Command rocprof-go is a GPU profiler for AMD GPUs with rocprofv3's command line.
package main

import (
	"os"

	"github.com/rocprof-go/rocprof-go/internal/launch"
)

func main() {
	code := execute(os.Args[1:])
	launch.Cleanup()
	os.Exit(code)
}
