package analysis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/output/model"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// csvTrace describes one trace CSV file kind: its file-name ending, the
// domain when the file has no Domain column, and the column holding the name.
type csvTrace struct {
	suffix string
	domain Domain
	name   string
}

var csvTraces = []csvTrace{
	{"kernel_trace.csv", Kernel, "Kernel_Name"},
	{"hip_api_trace.csv", HIP, "Function"},
	{"hsa_api_trace.csv", HSA, "Function"},
	{"marker_api_trace.csv", Marker, "Function"},
	{"rccl_api_trace.csv", RCCL, "Function"},
	{"rocdecode_api_trace.csv", ROCDecode, "Function"},
	{"rocjpeg_api_trace.csv", ROCJPEG, "Function"},
	{"memory_copy_trace.csv", Copy, "Direction"},
	{"memory_allocation_trace.csv", Allocation, "Operation"},
	{"scratch_memory_trace.csv", Scratch, "Operation"},
}

// scanCSVFiles streams the events of a run's trace CSV files, in path
// order; root is the run's directory (processes are keyed by their files'
// paths within it).
func scanCSVFiles(root string, files []string, fn func(*Event) error) error {
	files = append([]string(nil), files...)
	sort.Strings(files)
	procs := map[string]*Process{}
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			rel = f
		}
		if err := scanCSVFile(f, rel, procs, fn); err != nil {
			return err
		}
	}
	return nil
}

func traceOf(path string) *csvTrace {
	base := filepath.Base(path)
	for i := range csvTraces {
		if strings.HasSuffix(base, csvTraces[i].suffix) {
			return &csvTraces[i]
		}
	}
	return nil
}

// ScanCSVFile streams the events of one trace CSV file; rel names it within
// its run (processes are keyed by the file's prefix when there is no
// Process_Id column).
func ScanCSVFile(path, rel string, fn func(*Event) error) error {
	return scanCSVFile(path, rel, map[string]*Process{}, fn)
}

// scanCSVFile reads one file; procs holds the run's processes by key, so
// one process's files share one *Process.
func scanCSVFile(path, rel string, procs map[string]*Process, fn func(*Event) error) error {
	tr := traceOf(path)
	if tr == nil {
		return fmt.Errorf("%s: not a trace CSV file (expected a name ending in kernel_trace.csv, hip_api_trace.csv, …)", path)
	}
	if rel == "" {
		rel = filepath.Base(path)
	}
	f, err := atomicfile.OpenInput(path) // a FIFO is refused, not waited on
	if err != nil {
		return err
	}
	defer f.Close()
	r := newRowReader(f)
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	header = append([]string(nil), header...)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	need := []string{tr.name, "Start_Timestamp", "End_Timestamp"}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return fmt.Errorf("%s: no %s column (header %s)", path, n, strings.Join(header, ","))
		}
	}
	iName, iStart, iEnd := col[tr.name], col["Start_Timestamp"], col["End_Timestamp"]
	iDomain, hasDomain := col["Domain"]
	// A kernel trace's launch configuration, when its columns are there.
	launchCols := []string{"Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z", "Workgroup_Size_X", "Workgroup_Size_Y",
		"Workgroup_Size_Z", "LDS_Block_Size", "Scratch_Size"}
	var iLaunch []int
	if tr.domain == Kernel {
		for _, n := range launchCols {
			if i, ok := col[n]; ok {
				iLaunch = append(iLaunch, i)
			}
		}
		if len(iLaunch) != len(launchCols) {
			iLaunch = nil
		}
	}
	iPID, hasPID := col["Process_Id"]
	filePrefix := strings.TrimSuffix(rel, tr.suffix)
	// Processes are keyed by directory and pid, so one process's files
	// (pid from Process_Id or from the default "<pid>_" name) meet.
	namePID, nameErr := strconv.ParseInt(strings.TrimSuffix(filepath.Base(filePrefix), "_"), 10, 64)
	byColumn := map[string]*Process{}
	proc := func(pid string) *Process {
		if p, ok := byColumn[pid]; ok {
			return p
		}
		key, v := filePrefix, int64(0)
		n, err := strconv.ParseInt(pid, 10, 64)
		if pid == "" || err != nil {
			n, err = namePID, nameErr
		}
		if err == nil {
			key, v = filepath.Dir(filePrefix)+"#"+strconv.FormatInt(n, 10), n
		}
		p, ok := procs[key]
		if !ok {
			p = &Process{Key: key, PID: v, Rank: -1}
			procs[key] = p
		}
		byColumn[pid] = p
		return p
	}
	var ev Event
	for line := 2; ; line++ {
		rec, err := r.ReadRow(len(header), iName)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) == 1 && rec[0] == "" {
			continue
		}
		if len(rec) <= max(iName, iStart, iEnd) {
			return fmt.Errorf("%s:%d: %d fields, header has %d", path, line, len(rec), len(header))
		}
		ev = Event{Domain: tr.domain, Name: model.ValidString(rec[iName]), Bytes: -1}
		if iLaunch != nil {
			if ev.Launch, err = parseLaunch(rec, iLaunch); err != nil {
				return fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
		if hasDomain && len(rec) > iDomain && tr.domain != Marker {
			ev.Domain = CategoryDomain(rec[iDomain])
		}
		if ev.Start, err = strconv.ParseInt(rec[iStart], 10, 64); err == nil {
			ev.End, err = strconv.ParseInt(rec[iEnd], 10, 64)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: bad timestamp: %w", path, line, err)
		}
		pid := ""
		if hasPID && len(rec) > iPID {
			pid = rec[iPID]
		}
		ev.Process = proc(pid)
		if err := fn(&ev); err != nil {
			return err
		}
	}
}

// parseLaunch reads a kernel row's launch columns (grid, workgroup, LDS,
// scratch, at the indexes given in that order).
func parseLaunch(rec []string, idx []int) (Launch, error) {
	var v [8]int64
	for i, c := range idx {
		if c >= len(rec) {
			return Launch{}, fmt.Errorf("%d fields, no launch configuration", len(rec))
		}
		n, err := strconv.ParseInt(rec[c], 10, 64)
		if err != nil {
			return Launch{}, fmt.Errorf("bad launch configuration: %w", err)
		}
		v[i] = n
	}
	return Launch{Grid: [3]int64{v[0], v[1], v[2]}, Workgroup: [3]int64{v[3], v[4], v[5]}, LDS: v[6], Scratch: v[7]}, nil
}

// rowReader splits rocprofv3 CSV lines. rocprofv3 wraps strings in quotes
// without escaping quotes inside them (a kernel named `bar "x"` prints as
// "bar "x"", a ROCTx message {"phase":"fwd"} as "{"phase":"fwd"}"), which
// strict CSV readers reject or misparse. A row of a trace file has one cell
// of free text (the name: Kernel_Name, Function, ...) and every other cell
// is a number or a fixed word, so ReadRow takes the cells before the name
// from the left and those after it from the right, and the name is what
// lies between, whatever quotes and commas it holds. A name with a newline
// continues on the next lines.
type rowReader struct {
	r     *bufio.Reader
	cells []string
}

func newRowReader(r io.Reader) *rowReader { return &rowReader{r: bufio.NewReaderSize(r, 1<<16)} }

// maxRowBytes bounds a row that continues over several lines (a name has
// at most 64 KiB in a spool).
const maxRowBytes = 1 << 20

func (rr *rowReader) line() (string, error) {
	line, err := rr.r.ReadString('\n')
	if line == "" && err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// Read returns the next row split cell by cell (the header); the slice is
// reused by the next call.
func (rr *rowReader) Read() ([]string, error) {
	line, err := rr.line()
	if err != nil {
		return nil, err
	}
	rr.cells, _ = splitRow(rr.cells[:0], line)
	return rr.cells, nil
}

// ReadRow returns the next row of n cells whose cell free is the name; a
// row that does not have n cells is returned as split.
func (rr *rowReader) ReadRow(n, free int) ([]string, error) {
	line, err := rr.line()
	if err != nil {
		return nil, err
	}
	for {
		var open bool
		rr.cells, open = splitRow(rr.cells[:0], line)
		if len(rr.cells) == n && !open {
			return rr.cells, nil
		}
		if len(rr.cells) > n || (len(rr.cells) == n && open) {
			if cells, ok := anchorRow(rr.cells[:0], line, n, free); ok {
				rr.cells = cells
				return cells, nil
			}
		}
		if !open || len(line) > maxRowBytes {
			return rr.cells, nil
		}
		// A quoted cell runs to the line's end: the name holds a newline.
		next, err := rr.line()
		if err != nil {
			return rr.cells, nil
		}
		line += "\n" + next
	}
}

// splitRow splits a line at commas, a quoted cell ending at the first
// quote followed by a comma or the line's end; open reports a quoted cell
// the line ends in.
func splitRow(cells []string, line string) (_ []string, open bool) {
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			j := i + 1
			for j < len(line) && (line[j] != '"' || (j+1 < len(line) && line[j+1] != ',')) {
				j++
			}
			cells = append(cells, line[i+1:min(j, len(line))])
			if j >= len(line) {
				return cells, true
			}
			i = j + 1
		} else {
			j := strings.IndexByte(line[i:], ',')
			if j < 0 {
				return append(cells, line[i:]), false
			}
			cells = append(cells, line[i:i+j])
			i += j
		}
		if i >= len(line) {
			return cells, false
		}
		i++ // the comma
		if i == len(line) {
			return append(cells, ""), false
		}
	}
}

// anchorRow splits a line of n cells whose cell free is free text: the
// cells before it from the left, those after it from the right (neither
// holds a quote or a comma inside quotes), the name in between, its
// enclosing quotes removed.
func anchorRow(cells []string, line string, n, free int) ([]string, bool) {
	// From the left: free cells.
	i := 0
	for c := 0; c < free; c++ {
		j := nextCellEnd(line, i)
		if j < 0 {
			return cells, false
		}
		cells = append(cells, unquote(line[i:j]))
		i = j + 1
	}
	// From the right: n-1-free cells.
	right := make([]string, n-1-free)
	end := len(line)
	for c := len(right) - 1; c >= 0; c-- {
		k := prevCellStart(line, end)
		if k <= i {
			return cells, false
		}
		right[c] = unquote(line[k:end])
		end = k - 1 // the comma before the cell
	}
	if end < i {
		return cells, false
	}
	cells = append(cells, unquote(line[i:end]))
	return append(cells, right...), true
}

// nextCellEnd is the index of the comma that ends the cell at i (a cell
// without quotes or commas inside its quotes), -1 at the line's end.
func nextCellEnd(line string, i int) int {
	if i < len(line) && line[i] == '"' {
		j := strings.IndexByte(line[i+1:], '"')
		if j < 0 {
			return -1
		}
		i += j + 2
		if i < len(line) && line[i] == ',' {
			return i
		}
		return -1
	}
	j := strings.IndexByte(line[i:], ',')
	if j < 0 {
		return -1
	}
	return i + j
}

// prevCellStart is where the cell ending at end starts (after a comma).
func prevCellStart(line string, end int) int {
	if end > 0 && line[end-1] == '"' {
		j := strings.LastIndexByte(line[:end-1], '"')
		if j <= 0 || line[j-1] != ',' {
			return -1
		}
		return j
	}
	j := strings.LastIndexByte(line[:end], ',')
	if j < 0 {
		return -1
	}
	return j + 1
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// CSVReader reads a CSV file as rocprofv3 writes it (string cells quoted,
// quotes inside them not escaped): Header once, then Row for each row.
type CSVReader struct{ rr *rowReader }

// NewCSVReader reads CSV rows from r.
func NewCSVReader(r io.Reader) *CSVReader { return &CSVReader{newRowReader(r)} }

// Header returns the first row (a copy).
func (c *CSVReader) Header() ([]string, error) {
	h, err := c.rr.Read()
	return append([]string(nil), h...), err
}

// Row returns the next row of n cells, cell free being the one that may
// hold any text (a kernel name); io.EOF after the last. The slice is reused.
func (c *CSVReader) Row(n, free int) ([]string, error) { return c.rr.ReadRow(n, free) }
