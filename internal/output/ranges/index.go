package ranges

import "sort"

// op is one stack operation of a thread, at a correlation id.
type op struct {
	corr uint64
	msg  string // pushed message; "" with pop set
	pop  bool
}

// step says what is on top of a thread's stack from a correlation id on.
type step struct {
	corr uint64
	top  string // "" when the stack is empty
}

// Index finds the message on top of a thread's ROCTx stack at a correlation
// id. Add every thread range and mark, then call Find; Find after Add
// replays the thread again.
type Index struct {
	ops   map[uint32][]op
	steps map[uint32][]step
	dirty map[uint32]bool
}

// New returns an empty index.
func New() *Index {
	return &Index{ops: map[uint32][]op{}, steps: map[uint32][]step{}, dirty: map[uint32]bool{}}
}

// Add records a thread range: tid, the push's and the pop's correlation ids,
// and the message. A range whose pop id is not after its push id (a spool
// from before pop ids were recorded) is ignored.
func (x *Index) Add(tid uint32, push, pop uint64, msg string) {
	if pop <= push {
		return
	}
	x.ops[tid] = append(x.ops[tid], op{corr: push, msg: msg}, op{corr: pop, pop: true})
	x.dirty[tid] = true
}

// AddMark records a roctxMarkA of thread tid: rocprofv3 pushes its message,
// which names the thread's later dispatches until something covers or pops
// it.
func (x *Index) AddMark(tid uint32, corr uint64, msg string) {
	x.ops[tid] = append(x.ops[tid], op{corr: corr, msg: msg})
	x.dirty[tid] = true
}

// prepare replays a thread's operations in correlation-id order into the
// steps of its stack top.
func (x *Index) prepare(tid uint32) []step {
	if !x.dirty[tid] {
		return x.steps[tid]
	}
	ops := x.ops[tid]
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].corr < ops[j].corr })
	var stack []string
	steps := make([]step, 0, len(ops))
	for _, o := range ops {
		if o.pop {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		} else {
			stack = append(stack, o.msg)
		}
		top := ""
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		steps = append(steps, step{corr: o.corr, top: top})
	}
	x.steps[tid] = steps
	x.dirty[tid] = false
	return steps
}

// Find returns the message on top of thread tid's stack for a call with
// correlation id corr: as the thread's operations with smaller ids left it.
func (x *Index) Find(tid uint32, corr uint64) (string, bool) {
	s := x.prepare(tid)
	i := sort.Search(len(s), func(i int) bool { return s[i].corr >= corr }) - 1
	if i < 0 || s[i].top == "" {
		return "", false
	}
	return s[i].top, true
}
