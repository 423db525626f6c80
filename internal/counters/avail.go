package counters

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Available lists the counters that can be collected on this agent, in
// listing order: constants, then definitions. A derived counter whose
// references the agent lacks is left out, as it could never be evaluated.
func (db *DB) Available() []*Counter {
	out := make([]*Counter, 0, len(db.Counters))
	for _, c := range db.Counters {
		if _, err := db.Dimensions(c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// WriteAvail writes rocprofv3's --list-avail listing of one GPU:
// "GPU:<index>", "Name:<gfx>", then per counter Counter_Name, Description,
// Expression (derived) or Block (hardware), Dimensions and a blank line.
func (db *DB) WriteAvail(w io.Writer, gpuIndex int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "GPU:%d\nName:%s\n", gpuIndex, db.Arch)
	for _, c := range db.Available() {
		dims, _ := db.Dimensions(c)
		fmt.Fprintf(bw, "Counter_Name : %s\n", c.Name)
		fmt.Fprintf(bw, "Description : %s\n", strings.Join(strings.Fields(c.Description), " "))
		switch c.Kind {
		case Derived:
			fmt.Fprintf(bw, "Expression : %s\n", c.Expression)
		case Basic:
			fmt.Fprintf(bw, "Block : %s\n", c.Block)
		}
		parts := make([]string, len(dims))
		for i, d := range dims {
			parts[i] = d.String()
		}
		fmt.Fprintf(bw, "Dimensions : %s\n\n", strings.Join(parts, " "))
	}
	return bw.Flush()
}
