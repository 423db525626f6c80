package inject

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRoot is where procfs is mounted.
const procRoot = "/proc"

func procPath(pid int, rest ...string) string {
	return filepath.Join(append([]string{procRoot, strconv.Itoa(pid)}, rest...)...)
}

// procStat is what this package reads of /proc/PID/stat.
type procStat struct {
	comm  string
	state byte
	ppid  int
}

// readStat parses /proc/PID/stat (or /proc/PID/task/TID/stat): the command
// name is between the first '(' and the last ')', as it may hold both.
func readStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	open, cl := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || cl < open {
		return procStat{}, fmt.Errorf("%s: unexpected contents", path)
	}
	f := strings.Fields(string(b[cl+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("%s: unexpected contents", path)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("%s: unexpected parent %q", path, f[1])
	}
	return procStat{comm: string(b[open+1 : cl]), state: f[0][0], ppid: ppid}, nil
}

// readStatus returns the "Name:\tvalue" lines of a /proc status file.
func readStatus(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

// ids parses a status line of ids ("Uid:\t0\t0\t0\t0").
func ids(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err == nil {
			out = append(out, n)
		}
	}
	return out
}

// capSet parses a status capability mask (CapEff, CapPrm: hex).
func capSet(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}

// capSysPtrace is CAP_SYS_PTRACE's bit.
const capSysPtrace = 19

// tasks lists the thread ids of pid.
func tasks(pid int) ([]int, error) {
	ents, err := os.ReadDir(procPath(pid, "task"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}
