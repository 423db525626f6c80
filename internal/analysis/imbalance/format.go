package imbalance

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// Formats are Write's formats.
var Formats = []string{"text", "csv", "json"}

// Write prints t as text (times in microseconds), csv or json (times in
// nanoseconds).
func Write(w io.Writer, t *Table, format string) error {
	switch format {
	case "csv":
		return writeCSV(w, t)
	case "json":
		b, err := json.MarshalIndent(t, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "", "text":
		return writeText(w, t)
	}
	return fmt.Errorf("unknown format %q", format)
}

func dims(d [3]uint32) string { return fmt.Sprintf("%dx%dx%d", d[0], d[1], d[2]) }

func us(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 3, 64) }

func writeText(w io.Writer, t *Table) error {
	if _, err := fmt.Fprintf(w, "kernel time per rank across %d ranks (%s), per kernel and launch shape; times in microseconds\n", t.Ranks, t.Dir); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kernel\tgrid\tworkgroup\tcalls\tranks\ttotal\tmin\tmedian\tmax\tslowest rank\tmax/median")
	for _, r := range t.Rows {
		slow := strconv.FormatInt(r.Slowest, 10)
		if r.SlowHost != "" {
			slow += " (" + model.TerminalString(r.SlowHost) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.2f\n", model.TerminalString(r.Kernel), dims(r.Grid),
			dims(r.Workgroup), r.Calls, r.Ranks, us(float64(r.TotalNs)), us(float64(r.MinNs)), us(r.MedianNs),
			us(float64(r.MaxNs)), slow, r.Ratio)
	}
	return tw.Flush()
}

// CSVHeader is the csv format's first line.
var CSVHeader = []string{"Kernel_Name", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z", "Workgroup_Size_X", "Workgroup_Size_Y",
	"Workgroup_Size_Z", "Calls", "Ranks", "TotalDurationNs", "MinRankDurationNs", "MedianRankDurationNs",
	"MaxRankDurationNs", "SlowestRank", "SlowestHost", "MaxOverMedian"}

func writeCSV(w io.Writer, t *Table) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range t.Rows {
		if err := cw.Write([]string{r.Kernel, u(r.Grid[0]), u(r.Grid[1]), u(r.Grid[2]), u(r.Workgroup[0]), u(r.Workgroup[1]),
			u(r.Workgroup[2]), i(r.Calls), i(r.Ranks), i(r.TotalNs), i(r.MinNs), strconv.FormatFloat(r.MedianNs, 'f', -1, 64),
			i(r.MaxNs), i(r.Slowest), r.SlowHost, strconv.FormatFloat(r.Ratio, 'f', 4, 64)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
