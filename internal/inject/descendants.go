package inject

import (
	"os"
	"sort"
	"strconv"
	"strings"
)

// Descendants lists pid's descendants breadth-first (children in PID
// order): from /proc/PID/task/*/children (CONFIG_PROC_CHILDREN), else by
// scanning every /proc/N/stat for its parent. pid itself is not listed.
func Descendants(pid int) ([]int, error) {
	if _, err := os.Stat(procPath(pid)); err != nil {
		return nil, &Error{PID: pid, Cause: "no process has this PID", Fix: "check the PID (ps -p PID), the process may have ended", Err: err}
	}
	if _, err := os.Stat(procPath(pid, "task", strconv.Itoa(pid), "children")); err != nil {
		parents := parentsByScan()
		return descendants(pid, func(p int) []int { return parents[p] }), nil
	}
	return descendants(pid, childrenFile), nil
}

// descendants walks the tree from pid breadth-first with childrenOf.
func descendants(pid int, childrenOf func(int) []int) []int {
	var out []int
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range childrenOf(p) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// childrenFile reads the children of every thread of p.
func childrenFile(p int) []int {
	tids, err := tasks(p)
	if err != nil {
		return nil
	}
	var out []int
	for _, tid := range tids {
		b, err := os.ReadFile(procPath(p, "task", strconv.Itoa(tid), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	sort.Ints(out)
	return out
}

// parentsByScan maps every process to its children from /proc/N/stat.
func parentsByScan() map[int][]int {
	m := map[int][]int{}
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return m
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(procPath(n, "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		m[st.ppid] = append(m[st.ppid], n)
	}
	for k := range m {
		sort.Ints(m[k])
	}
	return m
}
