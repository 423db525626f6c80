package output

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"sort"
	"strconv"
	"strings"
)

// pcLines is a code object's DWARF line table as rocprofv3 turns it into
// the Instruction_Comment of a PC sample (rocprofiler-sdk's
// CodeobjDecoderComponent, code_printing.hpp): every line-table row with a
// non-zero line gives its address "FILE:LINE", followed by " -> FILE:LINE"
// for each inlined call whose range holds that address (the call sites,
// innermost first); a later row at the same address replaces an earlier
// one. A PC takes the text of the last row at or below it, the last row
// reaching to the code object's size. No line table: no comments.
type pcLines struct {
	addrs []uint64 // ascending
	texts []string
	size  uint64
}

// inlinedCall is a DW_TAG_inlined_subroutine: where it was inlined from,
// and the addresses it covers.
type inlinedCall struct {
	ranges [][2]uint64
	site   string
}

// cuInfo is one compilation unit: the addresses it holds and its inlined
// calls in depth-first order.
type cuInfo struct {
	ranges  [][2]uint64
	inlined []inlinedCall
}

func inRanges(rs [][2]uint64, a uint64) bool {
	for _, r := range rs {
		if a >= r[0] && a < r[1] {
			return true
		}
	}
	return false
}

// readPCLines reads the line table of an AMDGPU code object (an ELF); nil
// when it has none (or it does not parse).
func readPCLines(data []byte) *pcLines {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	defer f.Close()
	if f.Section(".debug_line") == nil {
		return nil
	}
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	rows := map[uint64]string{}
	var cus []cuInfo
	var rowAddrs []uint64
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			r.SkipChildren()
			continue
		}
		files := lr.Files()
		cu := cuInfo{}
		if rs, err := d.Ranges(e); err == nil {
			for _, x := range rs {
				cu.ranges = append(cu.ranges, [2]uint64{x[0], x[1]})
			}
		}
		// The CU's DIEs, depth first: its inlined calls, and (unless the
		// CU has a low and high pc) the ranges of its first DIE chain, as
		// rocprofiler-sdk's containment check walks only first children.
		firstChain := e.Val(dwarf.AttrLowpc) == nil || e.Val(dwarf.AttrHighpc) == nil
		if e.Children {
			depth := 1
			for depth > 0 {
				c, err := r.Next()
				if err != nil || c == nil {
					depth = 0
					break
				}
				if c.Tag == 0 {
					depth--
					firstChain = false
					continue
				}
				rs, _ := d.Ranges(c)
				if firstChain {
					for _, x := range rs {
						cu.ranges = append(cu.ranges, [2]uint64{x[0], x[1]})
					}
				}
				if c.Tag == dwarf.TagInlinedSubroutine {
					cf, okf := c.Val(dwarf.AttrCallFile).(int64)
					cl, okl := c.Val(dwarf.AttrCallLine).(int64)
					if okf && okl && cf >= 0 && int(cf) < len(files) && files[cf] != nil {
						ic := inlinedCall{site: files[cf].Name + ":" + strconv.FormatInt(cl, 10)}
						for _, x := range rs {
							ic.ranges = append(ic.ranges, [2]uint64{x[0], x[1]})
						}
						cu.inlined = append(cu.inlined, ic)
					}
				}
				if c.Children {
					depth++
				} else {
					firstChain = false
				}
			}
		}
		cus = append(cus, cu)
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.Line == 0 || le.File == nil {
				continue
			}
			if _, seen := rows[le.Address]; !seen {
				rowAddrs = append(rowAddrs, le.Address)
			}
			rows[le.Address] = le.File.Name + ":" + strconv.Itoa(le.Line)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	sort.Slice(rowAddrs, func(i, j int) bool { return rowAddrs[i] < rowAddrs[j] })
	pl := &pcLines{addrs: rowAddrs, texts: make([]string, len(rowAddrs)), size: uint64(len(data))}
	for i, a := range rowAddrs {
		var b strings.Builder
		b.WriteString(rows[a])
		// The first compilation unit holding the address gives the calls.
		for _, cu := range cus {
			if !inRanges(cu.ranges, a) {
				continue
			}
			for k := len(cu.inlined) - 1; k >= 0; k-- {
				if inRanges(cu.inlined[k].ranges, a) {
					b.WriteString(" -> ")
					b.WriteString(cu.inlined[k].site)
				}
			}
			break
		}
		pl.texts[i] = b.String()
	}
	return pl
}

// at is the comment of the instruction at vaddr (an address of the ELF).
func (pl *pcLines) at(vaddr uint64) string {
	if pl == nil {
		return ""
	}
	i := sort.Search(len(pl.addrs), func(i int) bool { return pl.addrs[i] > vaddr }) - 1
	if i < 0 {
		return ""
	}
	if i == len(pl.addrs)-1 && vaddr >= pl.size {
		return ""
	}
	return pl.texts[i]
}
