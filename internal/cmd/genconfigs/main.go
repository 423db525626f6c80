// Command genconfigs converts the shared AQLprofile block tables
// (golden/aqlprofile/blocks.json) and rocprofiler-sdk's counter_defs.yaml into
// the project's own checked-in data under configs/, so that nothing at build or
// test time needs the shared folder. It is run by `go generate ./configs`.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

func main() {
	shared := flag.String("shared", "../../shared", "path of the shared folder (holds golden/ and data/)")
	out := flag.String("out", ".", "configs directory to write")
	flag.Parse()
	if err := run(*shared, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genconfigs:", err)
		os.Exit(1)
	}
}

func run(shared, out string) error {
	if err := convertBlocks(filepath.Join(shared, "golden", "aqlprofile", "blocks.json"), filepath.Join(out, "arch")); err != nil {
		return err
	}
	return convertCounters(filepath.Join(shared, "data", "counter_defs.yaml"), filepath.Join(out, "counters.json"))
}

// srcReg is one register entry of the shared blocks.json.
type srcReg struct {
	Addr string  `json:"addr"`
	Name *string `json:"name"`
}

type srcBlock struct {
	Enum          int     `json:"block_name_enum"`
	Name          string  `json:"name"`
	InternalID    int     `json:"internal_id"`
	InstanceCount int     `json:"instance_count"`
	EventIDMax    int     `json:"event_id_max"`
	CounterCount  int     `json:"counter_count"`
	Attr          string  `json:"attr"`
	SamplesPerXCC int     `json:"samples_per_xcc"`
	SPMBlockID    *int    `json:"spm_block_id"`
	Select        srcSel  `json:"select_value"`
	Counters      []srcCR `json:"counters"`
}

type srcSel struct {
	Mask  string `json:"event_field_mask"`
	Const string `json:"constant_bits"`
}

type srcCR struct {
	Select  *srcReg `json:"select"`
	Control *srcReg `json:"control"`
	Lo      *srcReg `json:"lo"`
	Hi      *srcReg `json:"hi"`
	Select1 *srcReg `json:"select1"`
}

type srcArch struct {
	Label   string     `json:"label"`
	GfxIP   string     `json:"gfxip"`
	XCC     int        `json:"xcc_num"`
	SE      int        `json:"se_num"`
	CU      int        `json:"cu_num"`
	SA      int        `json:"shader_arrays_per_se"`
	GpuID   int        `json:"gpu_id_enum"`
	WgpPSA  int        `json:"num_wgps_per_sa"`
	Blocks  []srcBlock `json:"blocks"`
	Comment string     `json:"-"`
}

// Output schema: see configs/README.md.
type outArch struct {
	Provenance string            `json:"provenance"`
	Label      string            `json:"label"`
	GfxIP      string            `json:"gfxip"`
	GpuID      int               `json:"gpu_id"`
	XCC        int               `json:"xcc_num"`
	SE         int               `json:"se_num"`
	CU         int               `json:"cu_num"`
	SA         int               `json:"sa_per_se"`
	Blocks     []outBlock        `json:"blocks"`
	RegNames   map[string]string `json:"reg_names"`
}

type outBlock struct {
	Name          string `json:"name"`
	ID            int    `json:"id"`
	InternalID    int    `json:"internal_id"`
	InstanceCount int    `json:"instance_count"`
	EventIDMax    int    `json:"event_id_max"`
	CounterCount  int    `json:"counter_count"`
	Attr          string `json:"attr"`
	SelectMask    string `json:"select_mask"`
	SelectConst   string `json:"select_const"`
	// Regs holds one row per counter register set: select, control, lo, hi,
	// select1 as hex dword addresses ("" when absent).
	Regs [][5]string `json:"regs"`
}

func hexReg(r *srcReg, names map[string]string) string {
	if r == nil {
		return ""
	}
	a, err := strconv.ParseUint(r.Addr, 0, 32)
	if err != nil {
		panic(err)
	}
	s := fmt.Sprintf("0x%x", a)
	if r.Name != nil {
		names[s] = *r.Name
	}
	return s
}

func convertBlocks(src, outDir string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	for label, msg := range top {
		if strings.HasPrefix(label, "_") {
			continue
		}
		var a srcArch
		if err := json.Unmarshal(msg, &a); err != nil {
			return fmt.Errorf("%s %s: %w", src, label, err)
		}
		o := outArch{
			Provenance: "converted by internal/cmd/genconfigs from shared golden/aqlprofile/blocks.json (AQLprofile rocm-systems 1b1610fc2b2a block tables, register addresses resolved); see configs/README.md",
			Label:      a.Label, GfxIP: a.GfxIP, GpuID: a.GpuID, XCC: a.XCC, SE: a.SE, CU: a.CU, SA: a.SA,
			RegNames: map[string]string{},
		}
		for _, b := range a.Blocks {
			ob := outBlock{Name: b.Name, ID: b.Enum, InternalID: b.InternalID, InstanceCount: b.InstanceCount,
				EventIDMax: b.EventIDMax, CounterCount: b.CounterCount, Attr: b.Attr,
				SelectMask: b.Select.Mask, SelectConst: b.Select.Const}
			for _, c := range b.Counters {
				ob.Regs = append(ob.Regs, [5]string{hexReg(c.Select, o.RegNames), hexReg(c.Control, o.RegNames),
					hexReg(c.Lo, o.RegNames), hexReg(c.Hi, o.RegNames), hexReg(c.Select1, o.RegNames)})
			}
			o.Blocks = append(o.Blocks, ob)
		}
		sort.Slice(o.Blocks, func(i, j int) bool { return o.Blocks[i].ID < o.Blocks[j].ID })
		buf, err := json.MarshalIndent(o, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(outDir, label+".json"), append(buf, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type yamlDefs struct {
	SDK struct {
		Version  int `yaml:"counters-schema-version"`
		Counters []struct {
			Name        string `yaml:"name"`
			Description string `yaml:"description"`
			Definitions []struct {
				Architectures []string `yaml:"architectures"`
				Block         string   `yaml:"block"`
				Event         *int     `yaml:"event"`
				Expression    string   `yaml:"expression"`
			} `yaml:"definitions"`
		} `yaml:"counters"`
	} `yaml:"rocprofiler-sdk"`
}

type outCounter struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Defs        []outDef `json:"defs"`
}

type outDef struct {
	Archs      []string `json:"archs"`
	Block      string   `json:"block,omitempty"`
	Event      *int     `json:"event,omitempty"`
	Expression string   `json:"expression,omitempty"`
}

func convertCounters(src, dst string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var y yamlDefs
	if err := yaml.Unmarshal(raw, &y); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	out := struct {
		Provenance string       `json:"provenance"`
		Counters   []outCounter `json:"counters"`
	}{Provenance: "converted by internal/cmd/genconfigs from rocprofiler-sdk counter_defs.yaml (rocm-systems 2025-08-09, counters-schema-version 1); file order kept"}
	for _, c := range y.SDK.Counters {
		oc := outCounter{Name: c.Name, Description: c.Description}
		for _, d := range c.Definitions {
			oc.Defs = append(oc.Defs, outDef{Archs: d.Architectures, Block: d.Block, Event: d.Event, Expression: d.Expression})
		}
		out.Counters = append(out.Counters, oc)
	}
	buf, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(dst, append(buf, '\n'), 0o644)
}
