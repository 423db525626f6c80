package ranges

import "sort"

// span is one push/pop range of a thread.
type span struct {
	push, pop uint64 // correlation ids drawn at the push and at the pop
	msg       string
	parent    int // index of the enclosing span, -1 for none
}

// Index finds the innermost range around a (thread, correlation id). Add
// every thread range, then call Find; Find after Add re-sorts once.
type Index struct {
	threads map[uint32][]span
	dirty   map[uint32]bool
}

// New returns an empty index.
func New() *Index {
	return &Index{threads: map[uint32][]span{}, dirty: map[uint32]bool{}}
}

// Add records a thread range: tid, the push's and the pop's correlation ids,
// and the message. A range whose pop id is not after its push id (a spool
// from before pop ids were recorded) is ignored.
func (x *Index) Add(tid uint32, push, pop uint64, msg string) {
	if pop <= push {
		return
	}
	x.threads[tid] = append(x.threads[tid], span{push: push, pop: pop, msg: msg})
	x.dirty[tid] = true
}

// prepare sorts a thread's spans by push id and links each to its parent.
func (x *Index) prepare(tid uint32) []span {
	s := x.threads[tid]
	if !x.dirty[tid] {
		return s
	}
	sort.Slice(s, func(i, j int) bool { return s[i].push < s[j].push })
	var stack []int
	for i := range s {
		for len(stack) > 0 && s[stack[len(stack)-1]].pop < s[i].push {
			stack = stack[:len(stack)-1]
		}
		s[i].parent = -1
		if len(stack) > 0 {
			s[i].parent = stack[len(stack)-1]
		}
		stack = append(stack, i)
	}
	x.dirty[tid] = false
	return s
}

// Find returns the message of the innermost range of thread tid whose push
// and pop ids enclose corr.
func (x *Index) Find(tid uint32, corr uint64) (string, bool) {
	s := x.prepare(tid)
	// The last range pushed before corr, then outwards until one encloses it.
	i := sort.Search(len(s), func(i int) bool { return s[i].push >= corr }) - 1
	for i >= 0 {
		if s[i].push < corr && corr < s[i].pop {
			return s[i].msg, true
		}
		i = s[i].parent
	}
	return "", false
}
