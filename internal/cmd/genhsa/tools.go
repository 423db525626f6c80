package main

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The tools table (ToolsApiTable, ROCm 6.1 and later) is not an API the app
// calls: it holds the runtime's tool event callbacks (scratch memory
// allocation, free and asynchronous reclaim), which the runtime calls when
// a tool filled them in at OnLoad. The root table points to it through its
// tools_ member; runtimes without one (ROCm 5.2) have no such member.
//
// The generator records, per runtime, the table's version and slot order,
// where the root keeps its pointer, and the layout of the event records the
// callbacks receive (hsa_amd_tool.h), so that the shim installs its handlers
// by data and reads the events at offsets the headers gave.

// toolsTable is one runtime's tools table.
type toolsTable struct {
	Major, Step, Size int
	Slots             []string // event callback names, in slot order
	RootOffset        int      // offsetof(HsaApiTable, tools_)
	Events            map[string]int
}

var toolMember = regexp.MustCompile(`\n\s*([A-Za-z0-9_]+)\s+([A-Za-z0-9_]+)_fn\s*;`)

// parseTools returns the tools table's callback names, or nil when the
// runtime's root table has no tools_ member.
func parseTools(src string) ([]string, error) {
	root := strings.Index(src, "struct HsaApiTable {")
	if root < 0 {
		return nil, fmt.Errorf("struct HsaApiTable not found")
	}
	end := strings.Index(src[root:], "\n};")
	if end < 0 || !regexp.MustCompile(`ToolsApiTable\s*\*\s*tools_\s*;`).MatchString(src[root:root+end]) {
		return nil, nil
	}
	start := strings.Index(src, "struct ToolsApiTable {")
	if start < 0 {
		return nil, fmt.Errorf("the root table has tools_ but struct ToolsApiTable is not found")
	}
	tend := strings.Index(src[start:], "\n};")
	if tend < 0 {
		return nil, fmt.Errorf("struct ToolsApiTable has no end")
	}
	var out []string
	for _, m := range toolMember.FindAllStringSubmatch(src[start:start+tend], -1) {
		if m[1] == "ApiTableVersion" {
			continue
		}
		out = append(out, m[2])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("struct ToolsApiTable has no callbacks")
	}
	return out, nil
}

// toolEventFields are the event record fields the shim reads: every event
// starts with kind, queue and flags; the allocation events add the dispatch
// id, the end event the size and slot count.
var toolEventFields = []struct{ Struct, Field, Macro string }{
	{"hsa_amd_event_scratch_alloc_start_t", "queue", "QUEUE"},
	{"hsa_amd_event_scratch_alloc_start_t", "flags", "FLAGS"},
	{"hsa_amd_event_scratch_alloc_start_t", "dispatch_id", "DISPATCH_ID"},
	{"hsa_amd_event_scratch_alloc_end_t", "queue", "QUEUE"},
	{"hsa_amd_event_scratch_alloc_end_t", "flags", "FLAGS"},
	{"hsa_amd_event_scratch_alloc_end_t", "dispatch_id", "DISPATCH_ID"},
	{"hsa_amd_event_scratch_alloc_end_t", "size", "SIZE"},
	{"hsa_amd_event_scratch_alloc_end_t", "num_slots", "NUM_SLOTS"},
	{"hsa_amd_event_scratch_free_start_t", "queue", "QUEUE"},
	{"hsa_amd_event_scratch_free_start_t", "flags", "FLAGS"},
	{"hsa_amd_event_scratch_free_end_t", "queue", "QUEUE"},
	{"hsa_amd_event_scratch_free_end_t", "flags", "FLAGS"},
	{"hsa_amd_event_scratch_async_reclaim_start_t", "queue", "QUEUE"},
	{"hsa_amd_event_scratch_async_reclaim_start_t", "flags", "FLAGS"},
	{"hsa_amd_event_scratch_async_reclaim_end_t", "queue", "QUEUE"},
	{"hsa_amd_event_scratch_async_reclaim_end_t", "flags", "FLAGS"},
}

// probeToolsSource is the tools part of the probe program.
func probeToolsSource(slots []string) string {
	if slots == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("  V(ToolsApiTable, HSA_TOOLS_API_TABLE)\n")
	b.WriteString("  std::printf(\"R tools_ %zu\\n\", offsetof(HsaApiTable, tools_));\n")
	for _, s := range slots {
		fmt.Fprintf(&b, "  std::printf(\"T %s %%zu\\n\", offsetof(ToolsApiTable, %s_fn));\n", s, s)
	}
	for _, f := range toolEventFields {
		fmt.Fprintf(&b, "  std::printf(\"E %s.%s %%zu\\n\", offsetof(%s, %s));\n", f.Struct, f.Field, f.Struct, f.Field)
	}
	return b.String()
}

// mergedTools is the tools table across the runtimes that have one.
type mergedTools struct {
	Names   []string // by callback id
	Layouts []mergedLayout
	Roots   map[int]int    // root major -> tools_ offset (0: none)
	Fields  map[string]int // field macro -> byte offset, the same in every event and runtime
	From    []string
}

func mergeTools(versions []*version) (*mergedTools, error) {
	m := &mergedTools{Roots: map[int]int{}, Fields: map[string]int{}}
	id := map[string]int{}
	byMajor := map[int][]*version{}
	for _, v := range versions {
		off := 0
		if v.Tools != nil {
			off = v.Tools.RootOffset
		}
		if prev, ok := m.Roots[v.RootMajor]; ok && prev != off {
			return nil, fmt.Errorf("root table major %d keeps tools_ at %d in ROCm %s but %d elsewhere", v.RootMajor, off, v.Name, prev)
		}
		m.Roots[v.RootMajor] = off
		t := v.Tools
		if t == nil {
			continue
		}
		m.From = append(m.From, v.Name)
		for _, s := range t.Slots {
			if _, ok := id[s]; !ok {
				id[s] = len(m.Names)
				m.Names = append(m.Names, s)
			}
		}
		for _, f := range toolEventFields {
			key := f.Struct + "." + f.Field
			off, ok := t.Events[key]
			if !ok {
				return nil, fmt.Errorf("ROCm %s: the probe printed no offset for %s", v.Name, key)
			}
			if prev, ok := m.Fields[f.Macro]; ok && prev != off {
				return nil, fmt.Errorf("ROCm %s: %s is at byte %d, not %d as in the other events and runtimes", v.Name, key, off, prev)
			}
			m.Fields[f.Macro] = off
		}
		byMajor[t.Major] = append(byMajor[t.Major], v)
	}
	majors := make([]int, 0, len(byMajor))
	for k := range byMajor {
		majors = append(majors, k)
	}
	sort.Ints(majors)
	for _, maj := range majors {
		vs := byMajor[maj]
		longest := vs[0]
		for _, v := range vs {
			if len(v.Tools.Slots) > len(longest.Tools.Slots) {
				longest = v
			}
		}
		l := mergedLayout{Major: maj}
		for _, s := range longest.Tools.Slots {
			l.IDs = append(l.IDs, id[s])
		}
		for _, v := range vs {
			for i, s := range v.Tools.Slots {
				if id[s] != l.IDs[i] {
					return nil, fmt.Errorf("ToolsApiTable major %d: ROCm %s has %s in slot %d where ROCm %s has %s", maj, v.Name, s, i, longest.Name, m.Names[l.IDs[i]])
				}
			}
			if v.Tools.Step > l.Step {
				l.Step = v.Tools.Step
			}
			l.From = append(l.From, v.Name)
		}
		m.Layouts = append(m.Layouts, l)
	}
	return m, nil
}

func genToolsC(w *bytes.Buffer, m *mergedTools, roots []int) {
	fmt.Fprintf(w, "/* The tools table (ToolsApiTable: the runtime's tool event callbacks, which a\n")
	fmt.Fprintf(w, " * tool fills in at OnLoad), in ROCm %s. X(id, name): the callback slots. */\n", strings.Join(m.From, ", "))
	fmt.Fprintf(w, "#define RPG_HSA_TOOLS_EVENTS_COUNT %d\n", len(m.Names))
	w.WriteString("#define RPG_HSA_TOOLS_EVENTS(X)")
	for i, n := range m.Names {
		fmt.Fprintf(w, " \\\n    X(%d, %s)", i, n)
	}
	w.WriteString("\n\n")
	var refs []string
	for _, l := range m.Layouts {
		arr := fmt.Sprintf("rpg_layout_ToolsApiTable_%d", l.Major)
		fmt.Fprintf(w, "/* ToolsApiTable major %d (ROCm %s) */\n", l.Major, strings.Join(l.From, ", "))
		fmt.Fprintf(w, "static const uint16_t %s[] = {", arr)
		for _, id := range l.IDs {
			fmt.Fprintf(w, " %d,", id)
		}
		w.WriteString(" };\n")
		refs = append(refs, fmt.Sprintf("{%d, %d, %d, %s}", l.Major, l.Step, len(l.IDs), arr))
	}
	fmt.Fprintf(w, "static const struct rpg_api_layout RPG_HSA_TOOLS_EVENTS_LAYOUTS[] = {%s};\n\n", strings.Join(refs, ", "))
	w.WriteString("/* Where each root table major keeps its tools_ pointer (byte offset; 0: it has none). */\n")
	w.WriteString("struct rpg_root_layout {\n    uint32_t major, tools_offset;\n};\n")
	var rl []string
	for _, r := range roots {
		rl = append(rl, fmt.Sprintf("{%d, %d}", r, m.Roots[r]))
	}
	fmt.Fprintf(w, "static const struct rpg_root_layout RPG_HSA_ROOT_LAYOUTS[] = {%s};\n\n", strings.Join(rl, ", "))
	w.WriteString("/* Byte offsets in the event records the callbacks receive (hsa_amd_tool.h): the\n")
	w.WriteString(" * same in every event that has the field and in every runtime above. */\n")
	for _, f := range []string{"QUEUE", "FLAGS", "DISPATCH_ID", "SIZE", "NUM_SLOTS"} {
		fmt.Fprintf(w, "#define RPG_HSA_TOOL_EVENT_%s_OFFSET %d\n", f, m.Fields[f])
	}
	w.WriteString("\n")
}
