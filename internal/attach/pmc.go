package attach

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/aql"
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// Counters while attached (--pmc with --attach, docs/attach.md). No Go runs
// in the target, so everything the shim's Go does per counted dispatch in
// launch mode is done here, before the attach, and handed to the agent
// (internal/hsa/preload/attach_pmc.c) as a program in the run's private
// directory (PMCFile):
//
//   - the packets of the set's one pass for each GPU (start, stop, read and
//     their command buffer), built by internal/aql at made-up addresses,
//     with the places where the output and command buffers' addresses went
//     (relocations: found by building at other addresses and comparing, and
//     checked by building once more at random addresses);
//   - each requested counter's records as an affine function of the output
//     buffer's 64-bit samples (found by evaluating the counter on one-hot
//     buffers with internal/counters, and checked on random ones): what the
//     agent computes per dispatch, in C. A counter that is no such function
//     (a ratio, a max) is refused: launched runs collect it.
//
// The file is line based:
//
//	rpg-attach-pmc 1
//	agent NODE GPU_INDEX ARCH OUT_BYTES CMD_BYTES
//	base out|cmd ADDRESS_HEX          the addresses the templates were built at
//	cmd HEX                           the command buffer
//	start|stop|read HEX               the 64-byte AQL packets
//	reloc cmd|start|stop|read DWORD lo|hi|lo8|hi8 out|cmd
//	rec COUNTER_ID NAME CONSTANT NDIMS [DIM INDEX]... NTERMS [SAMPLE COEF]...
//	end
//
// SAMPLE is a 64-bit word's index in the output buffer.

// PMCFile is the counter program's name in the run's private directory.
const PMCFile = "attach.pmc"

// PMCSet is what a pass asks counted while attached.
type PMCSet struct {
	Names []string // one pass's counters (a --pmc set or a pmc: line)
	Opts  []counters.Option
}

// PMCPasses splits names into the passes each of agents needs (the most of
// any agent): while attached, pass k is collected in attach window k.
func PMCPasses(set PMCSet, agents []topology.Agent) ([][]string, error) {
	var most [][]string
	for _, a := range agents {
		db, err := loadDB(a, set.Opts)
		if err != nil {
			return nil, err
		}
		known, _, err := db.Split(set.Names, a.Index)
		if err != nil {
			return nil, err
		}
		plan, err := db.PlanPasses(known, a.Index)
		if err != nil {
			return nil, err
		}
		if len(plan.Passes) > len(most) {
			most = most[:0]
			for _, p := range plan.Passes {
				var names []string
				for _, r := range p.Requests {
					names = append(names, r.Raw)
				}
				most = append(most, names)
			}
		}
	}
	return most, nil
}

func loadDB(a topology.Agent, opts []counters.Option) (*counters.DB, error) {
	dev, err := counters.DeviceFromProperties(a.Arch, a.Properties)
	if err != nil {
		return nil, err
	}
	all := append([]counters.Option{counters.WithProperties(counters.PropertiesFromKFD(a.Properties))}, opts...)
	return counters.Load(dev, all...)
}

// PMCProgram builds the counter program of set for agents; warnings name
// counters an agent lacks (collected on the others, as rocprofv3 does).
func PMCProgram(set PMCSet, agents []topology.Agent) (prog []byte, warnings []string, err error) {
	var b bytes.Buffer
	b.WriteString("rpg-attach-pmc 1\n")
	for _, a := range agents {
		w, err := agentProgram(&b, set, a)
		if err != nil {
			return nil, nil, fmt.Errorf("counters on GPU %d (%s): %w", a.Index, a.Arch, err)
		}
		warnings = append(warnings, w...)
	}
	b.WriteString("end\n")
	return b.Bytes(), warnings, nil
}

// The addresses the templates are built at: the low halves 0, so that a
// low dword holds the offset; the output and command buffers told apart
// by their high halves.
const (
	baseOut uint64 = 0x100 << 32
	baseCmd uint64 = 0x200 << 32
)

// hdrVendor is the header the shim gives the counter packets (pmc.cpp):
// vendor-specific, barrier bit, system-scope acquire and release fences.
const hdrVendor = 0 | 1<<8 | 2<<9 | 2<<11

type pmcCounter struct {
	c        *counters.Counter
	id       int
	name     string
	dims     []counters.DimExtent
	instance int
}

func agentProgram(b *bytes.Buffer, set PMCSet, a topology.Agent) ([]string, error) {
	dev, err := counters.DeviceFromProperties(a.Arch, a.Properties)
	if err != nil {
		return nil, err
	}
	db, err := loadDB(a, set.Opts)
	if err != nil {
		return nil, err
	}
	known, missing, err := db.Split(set.Names, a.Index)
	if err != nil {
		return nil, err
	}
	var warnings []string
	for _, m := range missing {
		warnings = append(warnings, fmt.Sprintf("GPU %d: %v", a.Index, m))
	}
	if len(known) == 0 {
		return warnings, nil
	}
	plan, err := db.PlanPasses(known, a.Index)
	if err != nil {
		return nil, err
	}
	if len(plan.Passes) == 0 {
		return warnings, nil
	}
	if len(plan.Passes) > 1 {
		return nil, fmt.Errorf("%q needs %d passes, one attach window each: give them as pmc: lines", strings.Join(known, " "), len(plan.Passes))
	}
	pass := plan.Passes[0]
	if len(pass.Events) == 0 {
		return nil, fmt.Errorf("%q are constants only, with nothing to count on the GPU: attaching collects hardware counters", strings.Join(known, " "))
	}
	ids := map[*counters.Counter]int{}
	for i, c := range db.Counters {
		ids[c] = i
	}
	var cs []pmcCounter
	for _, r := range pass.Requests {
		c, ok := db.Lookup(r.Name)
		if !ok {
			continue
		}
		dims, err := db.Dimensions(c)
		if err != nil {
			return nil, err
		}
		name := c.Name
		if r.Instance >= 0 {
			name += "[" + strconv.Itoa(r.Instance) + "]"
		}
		cs = append(cs, pmcCounter{c: c, id: ids[c], name: name, dims: dims, instance: r.Instance})
	}
	build := func(out, cmd uint64) (*aql.PMCPackets, []uint32, error) {
		n := 0
		p, err := dev.BuildPMC(pass.Events, func(size uint64, _ aql.BufferFlags) (uint64, error) {
			n++
			if n == 1 {
				return out, nil
			}
			return cmd, nil
		})
		if err != nil {
			return nil, nil, err
		}
		return p, words(p), nil
	}
	pa, wa, err := build(baseOut, baseCmd)
	if err != nil {
		return nil, err
	}
	// Built again with each buffer moved (by a different amount each), the
	// words that change tell where an address went and in which encoding.
	moves := [][2]uint64{{1 << 32, 2 << 32}, {0x1000_0000, 0x2000_0000}, {1 << 40, 2 << 40}, {0x100, 0x200}}
	var moved [][]uint32
	for _, m := range moves {
		_, w, err := build(baseOut+m[0], baseCmd+m[1])
		if err != nil {
			return nil, err
		}
		if len(w) != len(wa) {
			return nil, fmt.Errorf("the PMC packets' size depends on their addresses: they cannot be built for the target")
		}
		moved = append(moved, w)
	}
	var relocs []reloc
	for i := range wa {
		changed := false
		for _, w := range moved {
			changed = changed || w[i] != wa[i]
		}
		if !changed {
			continue
		}
		found := false
		for enc := range encodings {
			for _, cmd := range []bool{false, true} {
				r := reloc{i, enc, cmd}
				ok := true
				for k, m := range moves {
					out, c := baseOut+m[0], baseCmd+m[1]
					if moved[k][i] != wa[i]+r.delta(out, c) {
						ok = false
					}
				}
				if ok && !found {
					relocs, found = append(relocs, r), true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("word %d of the PMC packets depends on their addresses in a way rocprof-go cannot relocate", i)
		}
	}
	// Checked: relocated to other addresses, the templates are what the
	// builder gives there.
	outD, cmdD := uint64(0x3456_789a_b000), uint64(0x4567_1230_0000)
	_, wd, err := build(outD, cmdD)
	if err != nil {
		return nil, err
	}
	if got := relocate(wa, relocs, outD, cmdD); !equalWords(got, wd) {
		return nil, fmt.Errorf("the PMC packets of %s cannot be relocated to the target's buffers", a.Arch)
	}
	fmt.Fprintf(b, "agent %d %d %s %d %d\n", a.NodeID, a.Index, a.Arch, pa.OutputSize, len(pa.CmdBuf))
	fmt.Fprintf(b, "base out %x\nbase cmd %x\n", baseOut, baseCmd)
	sections := []string{"cmd", "start", "stop", "read"}
	ncmd := len(pa.CmdBuf) / 4
	starts := []int{0, ncmd, ncmd + 16, ncmd + 32}
	for s, name := range sections {
		end := len(wa)
		if s+1 < len(starts) {
			end = starts[s+1]
		}
		sec := wa[starts[s]:end]
		raw := make([]byte, 4*len(sec))
		for i, w := range sec {
			binary.LittleEndian.PutUint32(raw[4*i:], w)
		}
		if s > 0 {
			binary.LittleEndian.PutUint16(raw, hdrVendor)
		}
		fmt.Fprintf(b, "%s %s\n", name, hex.EncodeToString(raw))
	}
	for _, r := range relocs {
		s := len(starts) - 1
		for r.word < starts[s] {
			s--
		}
		half, target := encodings[r.enc].name, "out"
		if r.cmd {
			target = "cmd"
		}
		fmt.Fprintf(b, "reloc %s %d %s %s\n", sections[s], r.word-starts[s], half, target)
	}
	recs, err := affine(db, cs, db.PlanSamples(pa), pa.OutputSize)
	if err != nil {
		return nil, err
	}
	b.WriteString(recs)
	return warnings, nil
}

// words is a packet set as the agent gets it: the command buffer's dwords,
// then the start, stop and read AQL packets' (16 each).
func words(p *aql.PMCPackets) []uint32 {
	var w []uint32
	for i := 0; i+4 <= len(p.CmdBuf); i += 4 {
		w = append(w, binary.LittleEndian.Uint32(p.CmdBuf[i:]))
	}
	for _, ib := range []*aql.IB{&p.Start, &p.Stop, &p.Read} {
		raw := ib.Packet.Bytes()
		for i := 0; i+4 <= len(raw); i += 4 {
			w = append(w, binary.LittleEndian.Uint32(raw[i:]))
		}
	}
	return w
}

// The encodings of an address in a packet word: its low and high halves,
// and those of the address in 256-byte units.
var encodings = []struct {
	name  string
	shift uint
}{{"lo", 0}, {"hi", 32}, {"lo8", 8}, {"hi8", 40}}

type reloc struct {
	word int
	enc  int
	cmd  bool
}

// delta is what the word gains when the buffers move from the bases to out
// and cmd.
func (r reloc) delta(out, cmd uint64) uint32 {
	base, real := baseOut, out
	if r.cmd {
		base, real = baseCmd, cmd
	}
	s := encodings[r.enc].shift
	return uint32(real>>s) - uint32(base>>s)
}

func relocate(w []uint32, rs []reloc, out, cmd uint64) []uint32 {
	got := append([]uint32(nil), w...)
	for _, r := range rs {
		got[r.word] += r.delta(out, cmd)
	}
	return got
}

func equalWords(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// affine renders each counter's records as constant + sum(coef x sample),
// checked against the evaluator on random buffers.
func affine(db *counters.DB, cs []pmcCounter, sm counters.SampleMap, outSize uint64) (string, error) {
	n := int(outSize / 8)
	buf := make([]byte, 8*n)
	in := counters.Inputs{}
	eval := func(c *counters.Counter) ([]counters.Record, error) {
		sm.Collect(buf, in)
		return db.Evaluate(c, in)
	}
	used := map[int]bool{}
	for i := 0; i < n; i++ {
		clear(buf)
		binary.LittleEndian.PutUint64(buf[8*i:], 1)
		sm.Collect(buf, in)
		for _, v := range in {
			for _, r := range v {
				if r.Value != 0 {
					used[i] = true
				}
			}
		}
	}
	var b strings.Builder
	for _, pc := range cs {
		clear(buf)
		zero, err := eval(pc.c)
		if err != nil {
			return "", err
		}
		coef := make([][]float64, len(zero))
		for i := 0; i < n; i++ {
			if !used[i] {
				continue
			}
			clear(buf)
			binary.LittleEndian.PutUint64(buf[8*i:], 1)
			one, err := eval(pc.c)
			if err != nil {
				return "", err
			}
			if len(one) != len(zero) {
				return "", notAffine(pc.name)
			}
			for r := range one {
				if one[r].Pos != zero[r].Pos {
					return "", notAffine(pc.name)
				}
				if d := one[r].Value - zero[r].Value; d != 0 {
					if coef[r] == nil {
						coef[r] = make([]float64, n)
					}
					coef[r][i] = d
				}
			}
		}
		rng := rand.New(rand.NewPCG(1, uint64(pc.id)))
		for try := 0; try < 3; try++ {
			x := make([]float64, n)
			for i := range x {
				v := uint64(rng.IntN(1 << 20))
				x[i] = float64(v)
				binary.LittleEndian.PutUint64(buf[8*i:], v)
			}
			got, err := eval(pc.c)
			if err != nil {
				return "", err
			}
			if len(got) != len(zero) {
				return "", notAffine(pc.name)
			}
			for r := range got {
				want := zero[r].Value
				for i, c := range coef[r] {
					want += c * x[i]
				}
				if math.Abs(got[r].Value-want) > 1e-9*math.Max(1, math.Abs(want)) {
					return "", notAffine(pc.name)
				}
			}
		}
		for r, z := range zero {
			skip := false
			var dims []string
			for _, e := range pc.dims {
				if len(dims) == 8 {
					break
				}
				v := z.Pos.Get(e.Dim)
				if pc.instance >= 0 && e.Dim == counters.DimInstance && v != pc.instance {
					skip = true
				}
				dims = append(dims, fmt.Sprintf("%d %d", e.Dim, v))
			}
			if skip {
				continue
			}
			var terms []string
			for i, c := range coef[r] {
				if c != 0 {
					terms = append(terms, fmt.Sprintf("%d %s", i, strconv.FormatFloat(c, 'g', -1, 64)))
				}
			}
			fmt.Fprintf(&b, "rec %d %s %s %d", pc.id, pc.name, strconv.FormatFloat(z.Value, 'g', -1, 64), len(dims))
			for _, d := range dims {
				b.WriteString(" " + d)
			}
			fmt.Fprintf(&b, " %d", len(terms))
			for _, t := range terms {
				b.WriteString(" " + t)
			}
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

func notAffine(name string) error {
	return fmt.Errorf("counter %s is not a sum of hardware samples (a ratio, a maximum): attaching collects basic counters and their sums; collect %s in a launched run", name, name)
}
