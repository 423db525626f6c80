package aql

import (
	"fmt"
	"strconv"
	"strings"
)

// Agent describes a GPU agent as aqlprofile_agent_info_v1_t does.
type Agent struct {
	GfxIP   string // e.g. "gfx90a"
	XCC     int    // XCCs (partition-dependent on MI300)
	SE      int    // shader engines, total across XCCs
	CU      int    // compute units, total
	SAPerSE int    // shader arrays per SE
}

// ParseAgent parses "gfx90a" or "gfx90a:xcc=1,se=8,cu=104,sa=1". Missing
// values default to the architecture's reference configuration (the one its
// block table was dumped with).
func ParseAgent(s string) (*Device, error) {
	name, params, _ := strings.Cut(strings.TrimSpace(s), ":")
	spec, err := lookupArch(name)
	if err != nil {
		return nil, err
	}
	t, err := TableByLabel(spec.table)
	if err != nil {
		return nil, err
	}
	a := t.Default
	a.GfxIP = name
	if params != "" {
		for _, kv := range strings.Split(params, ",") {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if !ok || err != nil || n <= 0 {
				return nil, fmt.Errorf("agent %q: %q is not key=positive-integer (keys: xcc, se, cu, sa)", s, kv)
			}
			switch strings.TrimSpace(k) {
			case "xcc":
				a.XCC = n
			case "se":
				a.SE = n
			case "cu":
				a.CU = n
			case "sa":
				a.SAPerSE = n
			default:
				return nil, fmt.Errorf("agent %q: unknown key %q (keys: xcc, se, cu, sa)", s, k)
			}
		}
	}
	return NewDevice(a)
}

// Device is an agent bound to its family rules and block table.
type Device struct {
	Agent
	Family Family
	Table  *Table
	spec   *familySpec
	arch   *archSpec
}

// NewDevice validates an agent and binds it to its architecture data.
func NewDevice(a Agent) (*Device, error) {
	arch, err := lookupArch(a.GfxIP)
	if err != nil {
		return nil, err
	}
	t, err := TableByLabel(arch.table)
	if err != nil {
		return nil, err
	}
	if a.XCC <= 0 || a.SE <= 0 || a.CU <= 0 || a.SAPerSE <= 0 {
		return nil, fmt.Errorf("agent %s: xcc, se, cu and sa must be positive (got xcc=%d se=%d cu=%d sa=%d)",
			a.GfxIP, a.XCC, a.SE, a.CU, a.SAPerSE)
	}
	if a.SE%a.XCC != 0 {
		return nil, fmt.Errorf("agent %s: se=%d is not a multiple of xcc=%d (se counts all XCCs)", a.GfxIP, a.SE, a.XCC)
	}
	return &Device{Agent: a, Family: arch.family, Table: t, spec: familySpecs[arch.family], arch: arch}, nil
}

// SEPerXCC is the shader engines of one XCC.
func (d *Device) SEPerXCC() int { return d.SE / d.XCC }

// WGPPerSA is AQLprofile's wgp_per_sa: used only from gfx11 on, 1 before.
func (d *Device) WGPPerSA() int {
	if !d.spec.wgpFactor {
		return 1
	}
	spx := d.SEPerXCC()
	return (d.CU/2 + d.SAPerSE*spx - 1) / (spx * d.SAPerSE)
}

// SamplesPerXCC is the number of 64-bit samples one event of b produces per XCC.
func (d *Device) SamplesPerXCC(b *Block) int {
	n := 1
	if b.Attr.Has(AttrSe) {
		n *= d.SEPerXCC()
	}
	if b.Attr.Has(AttrSa) {
		n *= 2
	}
	if b.Attr.Has(AttrWgp) {
		n *= d.WGPPerSA()
	}
	if d.spec.sqWgpFactor && b.Attr.Has(AttrSq) {
		n *= d.WGPPerSA()
	}
	return n
}

// BytesNeeded is AQLprofile's GetBytesNeeded for one event of b.
func (d *Device) BytesNeeded(b *Block) int { return d.SamplesPerXCC(b) * d.XCC * 8 }

func (d *Device) String() string {
	return fmt.Sprintf("%s:xcc=%d,se=%d,cu=%d,sa=%d", d.GfxIP, d.XCC, d.SE, d.CU, d.SAPerSE)
}
