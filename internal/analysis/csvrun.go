package analysis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	f, err := os.Open(path)
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
		rec, err := r.Read()
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
		ev = Event{Domain: tr.domain, Name: rec[iName], Bytes: -1}
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
// "bar "x""), which strict CSV readers reject or misparse; here a quoted
// cell ends at the first quote followed by a comma or the line end.
type rowReader struct {
	r     *bufio.Reader
	cells []string
}

func newRowReader(r io.Reader) *rowReader { return &rowReader{r: bufio.NewReaderSize(r, 1<<16)} }

// Read returns the next row; the slice is reused by the next call.
func (rr *rowReader) Read() ([]string, error) {
	line, err := rr.r.ReadString('\n')
	if line == "" && err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	rr.cells = splitRow(rr.cells[:0], line)
	return rr.cells, nil
}

func splitRow(cells []string, line string) []string {
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			j := i + 1
			for j < len(line) && (line[j] != '"' || (j+1 < len(line) && line[j+1] != ',')) {
				j++
			}
			cells = append(cells, line[i+1:min(j, len(line))])
			i = j + 1
		} else {
			j := strings.IndexByte(line[i:], ',')
			if j < 0 {
				return append(cells, line[i:])
			}
			cells = append(cells, line[i:i+j])
			i += j
		}
		if i >= len(line) {
			return cells
		}
		i++ // the comma
		if i == len(line) {
			return append(cells, "")
		}
	}
}
