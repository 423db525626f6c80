// Command hostinfo prints the host line (testsys.Host): the CPU, whether a
// hypervisor runs it, the kernel's clock source and the cost of the clock
// reads the recorder makes on the app's thread. `make bench` runs it first,
// so that build/bench.txt starts with the machine its figures come from.
//
// Usage: go run ./internal/cmd/hostinfo
package main

import (
	"fmt"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

func main() {
	fmt.Println(testsys.ReadHost())
}
