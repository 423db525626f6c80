package model

import (
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// CounterMeta is what rocprofv3's counter info says of a counter (JSON's
// counters list, ROCpd's rocpd_info_pmc): its description, its block (a
// hardware counter) or expression (a derived one), and its dimensions.
type CounterMeta struct {
	Description string
	Block       string
	Expression  string
	Derived     bool
	Constant    bool
	// DimensionIDs are rocprofiler-sdk's dimension ids (DIMENSION_XCC 1 ..
	// DIMENSION_INSTANCE 7) of the counter's dimensions, in listing order.
	DimensionIDs []uint64
}

// dimensionInstance is rocprofiler-sdk's DIMENSION_INSTANCE.
const dimensionInstance = 7

// SelectionExpression is the derived-counter expression that selects one
// instance of a hardware counter, which is what a NAME[i] selection
// collects: select(NAME,[DIMENSION_INSTANCE=[i]]). rocprofiler-compute
// defines its TCC channel counters (TCC_HIT[3]) so.
func SelectionExpression(base string, instance int) string {
	return "select(" + base + ",[DIMENSION_INSTANCE=[" + strconv.Itoa(instance) + "]])"
}

// SplitSelection splits a NAME[i] counter name into NAME and i; ok is
// false for a name without a [digits] suffix.
func SplitSelection(name string) (base string, instance int, ok bool) {
	if !strings.HasSuffix(name, "]") {
		return name, -1, false
	}
	i := strings.LastIndexByte(name, '[')
	if i <= 0 {
		return name, -1, false
	}
	n, err := strconv.Atoi(name[i+1 : len(name)-1])
	if err != nil || n < 0 || name[i+1] == '+' || name[i+1] == '-' {
		return name, -1, false
	}
	return name[:i], n, true
}

// counterIDs gives every instance selection its own counter id. The shim
// records a selection (--pmc 'TCC_HIT[0]' 'TCC_HIT[5]') under the id of
// the counter it selects from, with the selection's name: the id is shared
// by several names, which the formats that name counters by id (JSON,
// ROCpd, Perfetto, Parquet) would collapse into one counter. Each name of
// a shared id but the plain one gets id + k·2³², k the selection's
// instance + 1 (or the next free k for a name of another form), so ids are
// the same in every format and every spool of the counter's agent.
type counterIDs struct {
	names map[uint64]map[string]struct{} // names seen per recorded id
	// shared are the ids recorded under several names, with the id of
	// each name.
	shared map[uint64]map[string]uint64
}

func (t *counterIDs) note(id uint64, name string) {
	if t.names == nil {
		t.names = map[uint64]map[string]struct{}{}
	}
	m := t.names[id]
	if m == nil {
		m = map[string]struct{}{}
		t.names[id] = m
	}
	m[name] = struct{}{}
}

// finish numbers the names of the shared ids.
func (t *counterIDs) finish() {
	for id, m := range t.names {
		if len(m) < 2 {
			continue
		}
		if t.shared == nil {
			t.shared = map[uint64]map[string]uint64{}
		}
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		ids := map[string]uint64{}
		used := map[uint64]bool{}
		var others []string
		for _, n := range names {
			if _, inst, ok := SplitSelection(n); ok && !used[uint64(inst)+1] {
				k := uint64(inst) + 1
				ids[n], used[k] = id+k<<32, true
			} else if !ok && !used[0] {
				ids[n], used[0] = id, true
			} else {
				others = append(others, n)
			}
		}
		k := uint64(1)
		for _, n := range others {
			for used[k] {
				k++
			}
			ids[n], used[k] = id+k<<32, true
		}
		t.shared[id] = ids
	}
	t.names = nil
}

// CounterID is the id a counter sample is written under: its recorded id,
// or an instance selection's own id when the recorded id is shared (see
// counterIDs). name is the sample's name (CounterName).
func (p *Catalogue) CounterID(c *tracing.CounterSample) uint64 {
	ids := p.counterIDs.shared[c.CounterID]
	if ids == nil {
		return c.CounterID
	}
	if id, ok := ids[string(c.Name)]; ok {
		return id
	}
	if id, ok := ids[p.CounterName(c)]; ok {
		return id
	}
	return c.CounterID
}

// describeCounters fills each sampled counter's description from the
// Config's DescribeCounter (the counter definitions of its agent's
// architecture). A selection the definitions do not name is described as
// rocprofv3 describes rocprofiler-compute's select() counters: derived,
// SelectionExpression, with the selected counter's description.
func (p *Catalogue) describeCounters() {
	describe := p.Config.DescribeCounter
	if describe == nil {
		return
	}
	for i := range p.Counters {
		c := &p.Counters[i]
		arch := ""
		if a, ok := p.agentByNode[c.AgentNode]; ok {
			arch = p.Agents[a].Name
		}
		if m, ok := describe(arch, c.Name); ok {
			c.Meta = m
			continue
		}
		base, inst, ok := SplitSelection(c.Name)
		if !ok {
			continue
		}
		if m, ok := describe(arch, base); ok {
			// select() takes the instance dimension away (rocprofiler-sdk:
			// a counter left without dimensions has INSTANCE[1]).
			var dims []uint64
			for _, d := range m.DimensionIDs {
				if d != dimensionInstance {
					dims = append(dims, d)
				}
			}
			if len(dims) == 0 {
				dims = []uint64{dimensionInstance}
			}
			c.Meta = CounterMeta{Description: m.Description, Expression: SelectionExpression(base, inst),
				Derived: true, DimensionIDs: dims}
		}
	}
}
