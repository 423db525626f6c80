package aql

// DimID is aqlprofile's event-dimension id.
type DimID uint32

// Dimension ids (aqlprofile_iterate_event_ids).
const (
	DimXCD      DimID = 0
	DimAID      DimID = 1
	DimSE       DimID = 2
	DimSA       DimID = 3
	DimWGP      DimID = 4
	DimInstance DimID = 5
)

var dimNames = map[DimID]string{DimXCD: "XCD", DimAID: "AID", DimSE: "SE", DimSA: "SA", DimWGP: "WGP", DimInstance: "INSTANCE"}

func (d DimID) String() string { return dimNames[d] }

// DimIDs lists every dimension id with its name.
func DimIDs() []DimID { return []DimID{DimXCD, DimAID, DimSE, DimSA, DimWGP, DimInstance} }

// Dim is one dimension of a block with its extent.
type Dim struct {
	ID     DimID
	Extent int
}

// Coord is one coordinate of a sample.
type Coord struct {
	Dim
	Pos   int // position in the dimension list
	Value int
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// InstanceExtent is the dimension instance count of a block (what
// AQLPROFILE_INFO_BLOCK_ID reports), which can differ from the table's.
func (d *Device) InstanceExtent(b *Block) int {
	switch {
	case d.XCC > 1 && b.Attr.Has(AttrUmc):
		return b.InstanceCount / 4
	case d.spec.tcSeDimClamp && b.Attr.Has(AttrTc|AttrSe):
		return min(b.InstanceCount, ceilDiv(d.CU, d.SE*d.SAPerSE)+1)
	}
	return b.InstanceCount
}

// Dimensions is the block's dimension list, outermost first (the last
// dimension varies fastest in a counter id).
func (d *Device) Dimensions(b *Block) []Dim {
	dims := make([]Dim, 0, 4)
	if d.XCC > 1 {
		if b.Attr.Has(AttrUmc) {
			dims = append(dims, Dim{DimAID, 4})
		} else {
			dims = append(dims, Dim{DimXCD, d.XCC})
		}
	}
	if d.spec.sqWgpDim && b.Attr.Has(AttrSq) {
		dims = append(dims, Dim{DimWGP, ceilDiv(d.CU/2, d.SE*d.SAPerSE)})
	} else {
		dims = append(dims, Dim{DimInstance, d.InstanceExtent(b)})
	}
	if b.Attr.Has(AttrSe) {
		dims = append(dims, Dim{DimSE, d.SEPerXCC()})
	}
	if b.Attr.Has(AttrSa) {
		dims = append(dims, Dim{DimSA, d.SAPerSE})
	}
	return dims
}

// Coords decomposes a counter id over the block's dimensions.
func (d *Device) Coords(b *Block, counterID uint64) []Coord {
	dims := d.Dimensions(b)
	out := make([]Coord, len(dims))
	for i := len(dims) - 1; i >= 0; i-- {
		e := uint64(dims[i].Extent)
		out[i] = Coord{Dim: dims[i], Pos: i, Value: int(counterID % e)}
		counterID /= e
	}
	return out
}
