package aql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	gpudata "github.com/rocprof-go/rocprof-go/configs/gpu"
	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
)

// CounterRegs is one counter's register set; a zero address means absent.
type CounterRegs struct {
	Select, Control, Lo, Hi, Select1 pm4.Reg
}

// Block is one hardware block of an architecture's table.
type Block struct {
	Name          string
	ID            BlockID
	InternalID    int
	InstanceCount int // the table's count (the dimension count can differ)
	EventIDMax    uint32
	CounterCount  int
	Attr          Attr
	SelectMask    uint32
	SelectConst   uint32
	// Regs has CounterCount rows, or CounterCount·InstanceCount rows for
	// ExplInst blocks (row = instance·CounterCount + slot).
	Regs []CounterRegs
}

// SelectValue is the value programmed into a select register for an event.
func (b *Block) SelectValue(event uint32) uint32 { return b.SelectConst | event&b.SelectMask }

// Table is one architecture's block table, as AQLprofile's Pm4Factory has it.
type Table struct {
	Label   string // e.g. "gfx90a_mi210"
	GfxIP   string
	GpuID   int
	Default Agent // the agent configuration the table was dumped with
	Blocks  []*Block

	byName   map[string]*Block
	byID     map[BlockID]*Block
	regNames map[pm4.Reg]string
}

// BlockByName finds a block by its table name ("SQ", "GL2C", ...).
func (t *Table) BlockByName(name string) (*Block, bool) { b, ok := t.byName[name]; return b, ok }

// BlockByID finds a block by its block_name id.
func (t *Table) BlockByID(id BlockID) (*Block, bool) { b, ok := t.byID[id]; return b, ok }

// RegName names a register of this architecture ("" if unknown).
func (t *Table) RegName(r pm4.Reg) string {
	if n, ok := t.regNames[r]; ok {
		return n
	}
	return commonRegNames[r]
}

// file schema written by internal/cmd/genconfigs.
type tableFile struct {
	Label    string            `json:"label"`
	GfxIP    string            `json:"gfxip"`
	GpuID    int               `json:"gpu_id"`
	XCC      int               `json:"xcc_num"`
	SE       int               `json:"se_num"`
	CU       int               `json:"cu_num"`
	SA       int               `json:"sa_per_se"`
	RegNames map[string]string `json:"reg_names"`
	Blocks   []struct {
		Name          string      `json:"name"`
		ID            BlockID     `json:"id"`
		InternalID    int         `json:"internal_id"`
		InstanceCount int         `json:"instance_count"`
		EventIDMax    uint32      `json:"event_id_max"`
		CounterCount  int         `json:"counter_count"`
		Attr          string      `json:"attr"`
		SelectMask    string      `json:"select_mask"`
		SelectConst   string      `json:"select_const"`
		Regs          [][5]string `json:"regs"`
	} `json:"blocks"`
}

func parseHex(s string) (uint32, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 0, 32)
	return uint32(v), err
}

func loadTable(label string) (*Table, error) {
	raw, err := gpudata.Files.ReadFile("arch/" + label + ".json")
	if err != nil {
		return nil, fmt.Errorf("no block table %q: %w", label, err)
	}
	var f tableFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("block table %s: %w", label, err)
	}
	t := &Table{Label: f.Label, GfxIP: f.GfxIP, GpuID: f.GpuID,
		Default: Agent{GfxIP: f.GfxIP, XCC: f.XCC, SE: f.SE, CU: f.CU, SAPerSE: f.SA},
		byName:  map[string]*Block{}, byID: map[BlockID]*Block{}, regNames: map[pm4.Reg]string{}}
	bad := func(what string, err error) error { return fmt.Errorf("block table %s: %s: %w", label, what, err) }
	for k, v := range f.RegNames {
		a, err := parseHex(k)
		if err != nil {
			return nil, bad("reg_names", err)
		}
		t.regNames[pm4.Reg(a)] = v
	}
	for _, fb := range f.Blocks {
		b := &Block{Name: fb.Name, ID: fb.ID, InternalID: fb.InternalID, InstanceCount: fb.InstanceCount,
			EventIDMax: fb.EventIDMax, CounterCount: fb.CounterCount}
		var a uint32
		if a, err = parseHex(fb.Attr); err != nil {
			return nil, bad(fb.Name, err)
		}
		b.Attr = Attr(a)
		if b.SelectMask, err = parseHex(fb.SelectMask); err != nil {
			return nil, bad(fb.Name, err)
		}
		if b.SelectConst, err = parseHex(fb.SelectConst); err != nil {
			return nil, bad(fb.Name, err)
		}
		for _, row := range fb.Regs {
			var r [5]uint32
			for i, s := range row {
				if r[i], err = parseHex(s); err != nil {
					return nil, bad(fb.Name, err)
				}
			}
			b.Regs = append(b.Regs, CounterRegs{pm4.Reg(r[0]), pm4.Reg(r[1]), pm4.Reg(r[2]), pm4.Reg(r[3]), pm4.Reg(r[4])})
		}
		t.Blocks = append(t.Blocks, b)
		t.byName[b.Name] = b
		t.byID[b.ID] = b
	}
	return t, nil
}

var tables sync.Map // label → *Table

// TableByLabel loads (once) the block table with the given label.
func TableByLabel(label string) (*Table, error) {
	if t, ok := tables.Load(label); ok {
		return t.(*Table), nil
	}
	t, err := loadTable(label)
	if err != nil {
		return nil, err
	}
	actual, _ := tables.LoadOrStore(label, t)
	return actual.(*Table), nil
}

// Labels lists the block tables available, sorted.
func Labels() []string {
	ents, _ := gpudata.Files.ReadDir("arch")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		n := e.Name()
		out = append(out, n[:len(n)-len(".json")])
	}
	sort.Strings(out)
	return out
}
