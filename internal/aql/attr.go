package aql

import "strings"

// Attr is a block's AQLprofile attribute bit set.
type Attr uint32

// Block attributes (bit values from AQLprofile's block tables).
const (
	AttrDflt      Attr = 0x1
	AttrSe        Attr = 0x2
	AttrSq        Attr = 0x4
	AttrClean     Attr = 0x8
	AttrMc        Attr = 0x10
	AttrSdma      Attr = 0x100
	AttrTc        Attr = 0x400
	AttrExplInst  Attr = 0x800
	AttrSpmGlobal Attr = 0x1000
	AttrSpmSe     Attr = 0x2000
	AttrGus       Attr = 0x4000
	AttrGRBM      Attr = 0x8000
	AttrUmc       Attr = 0x10000
	AttrSa        Attr = 0x20000
	AttrAid       Attr = 0x40000
	AttrSPI       Attr = 0x80000
	AttrWgp       Attr = 0x100000
	AttrRpb       Attr = 0x200000
	AttrAtc       Attr = 0x400000

	// AttrCpmon is the set whose presence makes the builders drive CP_PERFMON_CNTL.
	AttrCpmon Attr = 0x1F
)

var attrNames = []struct {
	a    Attr
	name string
}{
	{AttrDflt, "Dflt"}, {AttrSe, "Se"}, {AttrSq, "Sq"}, {AttrClean, "Clean"}, {AttrMc, "Mc"},
	{AttrSdma, "Sdma"}, {AttrTc, "Tc"}, {AttrExplInst, "ExplInst"}, {AttrSpmGlobal, "SpmGlobal"},
	{AttrSpmSe, "SpmSe"}, {AttrGus, "Gus"}, {AttrGRBM, "GRBM"}, {AttrUmc, "Umc"}, {AttrSa, "Sa"},
	{AttrAid, "Aid"}, {AttrSPI, "SPI"}, {AttrWgp, "Wgp"}, {AttrRpb, "Rpb"}, {AttrAtc, "Atc"},
}

// Has reports whether all bits of b are set.
func (a Attr) Has(b Attr) bool { return a&b == b }

// Any reports whether any bit of b is set.
func (a Attr) Any(b Attr) bool { return a&b != 0 }

func (a Attr) String() string {
	var parts []string
	for _, n := range attrNames {
		if a.Has(n.a) {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "|")
}
