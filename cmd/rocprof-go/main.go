// Command rocprof-go is a GPU profiler for AMD GPUs with rocprofv3's command line.
package main

import "os"

func main() {
	os.Exit(execute(os.Args[1:]))
}
