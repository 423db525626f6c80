package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/aql"
	"github.com/rocprof-go/rocprof-go/internal/aql/pm4"
	"github.com/rocprof-go/rocprof-go/internal/counters"
	"github.com/rocprof-go/rocprof-go/internal/options"
)

func init() { registerSubcommand(newPacketsCmd) }

// packetsArgs are the packets subcommand's options.
type packetsArgs struct {
	agent, events, format, extra, marker string
	pmc                                  []string
	baseAddr                             string
	att                                  bool
	attTargetCU, attSIMD, attSEMask      string
	attBufferSize                        string
}

func newPacketsCmd() *cobra.Command {
	var a packetsArgs
	cmd := &cobra.Command{
		Use:   "packets --agent AGENT (--pmc NAMES | --events FILE | --att) [options]",
		Short: "print the AQL/PM4 packets rocprof-go injects for a counter set or a thread trace",
		Long: `Builds the PMC (start, stop, read) or thread-trace (start, stop) packets exactly as AMD's
AQLprofile would, without a GPU, and prints them.

  rocprof-go packets --agent gfx90a:xcc=1,se=8,cu=104,sa=1 --pmc SQ_WAVES,TCC_HIT[1]
  rocprof-go packets --agent gfx942 --events events.json --format text
  rocprof-go packets --agent gfx90a --att --att-target-cu 0 --att-buffer-size 0x4000000

--pmc NAME is every instance of a hardware counter, NAME[i] instance i; a derived counter
expands to its hardware counters. --events reads a JSON array of raw events
{"block": "SQ", "block_index": 0, "event_id": 4, "flags": 0} (flags 1/2: SQ accumulate
LO_RES/HI_RES). Buffers are placed from --base-addr, each rounded up to 4 KiB: PMC output
buffer then command buffer; ATT control buffer, trace buffer, command buffer, then the
code-object marker IB (--codeobj-marker id=7,addr=0x7F1234560000,size=0x2000[,unload][,from-start]).
--att-* defaults are rocprofv3's: target CU 1, SIMD mask 0xF, SE mask 0x1, 256 MiB.
Formats: json (default; the goldens' encoding), text (disassembly), bin (the 64-byte AQL
packets in start, stop, read order, then the command buffer).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 0 {
				return &usageError{fmt.Sprintf("packets takes no arguments (got %q)", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPackets(cmd.OutOrStdout(), &a)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.agent, "agent", "", "GPU agent: ARCH[:xcc=N,se=N,cu=N,sa=N] (totals across XCCs)")
	f.StringSliceVar(&a.pmc, "pmc", nil, "counters: NAME, NAME[i] (comma-separated or repeated)")
	f.StringVar(&a.events, "events", "", "JSON file with raw PMC events")
	f.StringVarP(&a.extra, "extra-counters", "E", "", "YAML file with extra counter definitions")
	f.StringVar(&a.baseAddr, "base-addr", "0x100000000000", "address of the first buffer")
	f.StringVar(&a.format, "format", "json", "output format: json, text or bin")
	f.BoolVar(&a.att, "att", false, "build thread-trace (SQTT) packets instead of PMC ones")
	f.StringVar(&a.attTargetCU, "att-target-cu", "1", "ATT target compute unit (0..15)")
	f.StringVar(&a.attSIMD, "att-simd-select", "0xF", "ATT SIMD mask")
	f.StringVar(&a.attSEMask, "att-shader-engine-mask", "0x1", "ATT shader-engine mask")
	f.StringVar(&a.attBufferSize, "att-buffer-size", "0x10000000", "ATT trace buffer size in bytes")
	f.StringVar(&a.marker, "codeobj-marker", "", "also build a code-object marker: id=N,addr=A,size=S[,unload][,from-start]")
	return cmd
}

func parseU64(flag, s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return 0, &usageError{fmt.Sprintf("--%s %q: not an integer (decimal or 0x hex)", flag, s)}
	}
	return v, nil
}

// rawEvent is one entry of an --events file.
type rawEvent struct {
	Block      string `json:"block"`
	BlockIndex uint32 `json:"block_index"`
	EventID    uint32 `json:"event_id"`
	Flags      uint32 `json:"flags"`
}

func readEvents(dev *aql.Device, path string) ([]aql.Event, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []rawEvent
	if err := json.Unmarshal(raw, &rs); err != nil {
		return nil, fmt.Errorf("%s: expected a JSON array of {\"block\", \"block_index\", \"event_id\", \"flags\"}: %w", path, err)
	}
	evs := make([]aql.Event, len(rs))
	for i, r := range rs {
		b, ok := dev.Table.BlockByName(r.Block)
		if !ok {
			var names []string
			for _, b := range dev.Table.Blocks {
				names = append(names, b.Name)
			}
			return nil, fmt.Errorf("%s: event %d: block %q does not exist on %s (blocks: %s)", path, i, r.Block, dev.GfxIP, strings.Join(names, ", "))
		}
		evs[i] = aql.Event{Block: b.ID, Index: r.BlockIndex, EventID: r.EventID, Flags: r.Flags}
	}
	return evs, nil
}

func pmcEvents(dev *aql.Device, a *packetsArgs) ([]aql.Event, error) {
	if (len(a.pmc) == 0) == (a.events == "") {
		return nil, &usageError{"give exactly one of --pmc NAMES, --events FILE or --att"}
	}
	if a.events != "" {
		return readEvents(dev, a.events)
	}
	var opts []counters.Option
	if defs := options.MetricsDefinitionsFile(os.LookupEnv); defs != "" {
		opts = append(opts, counters.WithDefinitionsFile(defs))
	}
	if a.extra != "" {
		opts = append(opts, counters.WithExtraFile(a.extra))
	}
	db, err := counters.Load(dev, opts...)
	if err != nil {
		return nil, err
	}
	// One packet set is one pass: a set that needs more gets the split printed.
	if _, err := db.Validate(a.pmc, -1); err != nil {
		return nil, err
	}
	var evs []aql.Event
	seen := map[aql.Event]bool{}
	for _, name := range a.pmc {
		r, err := db.ParseRequest(name)
		if err != nil {
			return nil, err
		}
		e, err := db.Events(r)
		if err != nil {
			return nil, err
		}
		for _, x := range e {
			if !seen[x] {
				seen[x] = true
				evs = append(evs, x)
			}
		}
	}
	return evs, nil
}

func parseMarker(s string) (aql.CodeObjMarker, error) {
	var m aql.CodeObjMarker
	have := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch k {
		case "id":
			m.ID, err = parseU64("codeobj-marker id", v)
		case "addr":
			m.Addr, err = parseU64("codeobj-marker addr", v)
		case "size":
			m.Size, err = parseU64("codeobj-marker size", v)
		case "unload":
			m.IsUnload = true
		case "from-start":
			m.FromStart = true
		default:
			return m, &usageError{fmt.Sprintf("--codeobj-marker: unknown key %q (id, addr, size, unload, from-start)", k)}
		}
		if err != nil {
			return m, err
		}
		have[k] = true
	}
	if !have["id"] {
		return m, &usageError{"--codeobj-marker needs id=N"}
	}
	return m, nil
}

// packetsOut is the JSON document; its keys follow the AQLprofile goldens.
type packetsOut struct {
	Kind           string      `json:"kind"`
	Agent          agentOut    `json:"agent"`
	ArenaBase      string      `json:"arena_base"`
	Events         []eventOut  `json:"events,omitempty"`
	Allocations    []allocOut  `json:"allocations"`
	Packets        []packetOut `json:"packets"`
	CmdBufAddr     string      `json:"cmdbuf_addr"`
	CmdBufSize     int         `json:"cmdbuf_size"`
	OutputAddr     string      `json:"output_buffer_addr,omitempty"`
	OutputSize     uint64      `json:"output_buffer_size,omitempty"`
	IterateData    []iterOut   `json:"iterate_data,omitempty"`
	CodeObjMarker  *markerOut  `json:"codeobj_marker,omitempty"`
	TraceSEBuffers []string    `json:"trace_se_buffers,omitempty"`
}

type markerOut struct {
	Allocation string    `json:"allocation"`
	Packet     packetOut `json:"packet"`
}

type agentOut struct {
	GfxIP string `json:"agent_gfxip"`
	XCC   int    `json:"xcc_num"`
	SE    int    `json:"se_num"`
	CU    int    `json:"cu_num"`
	SA    int    `json:"shader_arrays_per_se"`
	Table string `json:"block_table"`
}

type eventOut struct {
	Block      string `json:"block"`
	BlockEnum  uint32 `json:"block_name_enum"`
	BlockIndex uint32 `json:"block_index"`
	EventID    uint32 `json:"event_id"`
	Flags      uint32 `json:"flags_raw"`
}

type allocOut struct {
	Order  int    `json:"order"`
	Role   string `json:"role"`
	Addr   string `json:"addr"`
	Size   uint64 `json:"size"`
	Flags  string `json:"flags_raw"`
	Device int    `json:"device_access"`
	Host   int    `json:"host_access"`
	Hint   string `json:"memory_hint"`
}

type packetOut struct {
	Name     string   `json:"name"`
	AQL      []string `json:"aql_dwords"`
	IBAddr   string   `json:"ib_addr"`
	IBSize   int      `json:"ib_size_dwords"`
	IBOffset int      `json:"ib_offset_in_cmdbuf"`
	PM4      []string `json:"pm4"`
}

type coordOut struct {
	Pos    int    `json:"pos"`
	DimID  uint32 `json:"dim_id"`
	Extent int    `json:"extent"`
	Coord  int    `json:"coord"`
	Name   string `json:"name"`
}

type iterOut struct {
	Seq        int        `json:"seq"`
	BlockName  uint32     `json:"block_name"`
	BlockIndex uint32     `json:"block_index"`
	EventID    uint32     `json:"event_id"`
	Flags      uint32     `json:"flags"`
	CounterID  uint64     `json:"counter_id"`
	OutputSlot int        `json:"output_slot_u64"`
	Coords     []coordOut `json:"coords"`
}

func hex32s(dw []uint32) []string {
	out := make([]string, len(dw))
	for i, v := range dw {
		out[i] = fmt.Sprintf("0x%08x", v)
	}
	return out
}

func hex64(v uint64) string { return fmt.Sprintf("0x%x", v) }

func packetJSON(ib *aql.IB) packetOut {
	return packetOut{Name: ib.Name, AQL: hex32s(ib.Packet[:]), IBAddr: hex64(ib.Addr), IBSize: len(ib.DW),
		IBOffset: ib.Offset, PM4: hex32s(ib.DW)}
}

func allocsJSON(as []aql.Allocation) []allocOut {
	out := make([]allocOut, len(as))
	for i, a := range as {
		b2i := func(b bool) int {
			if b {
				return 1
			}
			return 0
		}
		out[i] = allocOut{Order: i, Role: a.Role, Addr: hex64(a.Addr), Size: a.Size, Flags: fmt.Sprintf("0x%08x", uint32(a.Flags)),
			Device: b2i(a.Flags.DeviceAccess()), Host: b2i(a.Flags.HostAccess()), Hint: a.Flags.Hint().String()}
	}
	return out
}

func runPackets(w io.Writer, a *packetsArgs) error {
	if a.agent == "" {
		return &usageError{"--agent is required, e.g. --agent gfx90a:xcc=1,se=8,cu=104,sa=1"}
	}
	switch a.format {
	case "json", "text", "bin":
	default:
		return &usageError{fmt.Sprintf("--format %q: use json, text or bin", a.format)}
	}
	dev, err := aql.ParseAgent(a.agent)
	if err != nil {
		return err
	}
	base, err := parseU64("base-addr", a.baseAddr)
	if err != nil {
		return err
	}
	arena := &aql.Arena{Next: base}
	doc := packetsOut{ArenaBase: hex64(base),
		Agent: agentOut{GfxIP: dev.GfxIP, XCC: dev.XCC, SE: dev.SE, CU: dev.CU, SA: dev.SAPerSE, Table: dev.Table.Label}}
	var ibs []*aql.IB
	var cmdbuf []byte
	if a.att {
		if len(a.pmc) > 0 || a.events != "" {
			return &usageError{"--att builds thread-trace packets: it cannot be combined with --pmc or --events"}
		}
		cfg := aql.RocprofATTConfig()
		for _, p := range []struct {
			flag, v string
			id      aql.ATTParam
		}{{"att-target-cu", a.attTargetCU, aql.ATTComputeUnitTarget}, {"att-simd-select", a.attSIMD, aql.ATTSIMDSelection},
			{"att-shader-engine-mask", a.attSEMask, aql.ATTSEMask}} {
			v, err := parseU64(p.flag, p.v)
			if err != nil {
				return err
			}
			if err := cfg.Apply(p.id, v); err != nil {
				return &usageError{"--" + p.flag + ": " + err.Error()}
			}
		}
		if cfg.BufferSize, err = parseU64("att-buffer-size", a.attBufferSize); err != nil {
			return err
		}
		p, err := dev.BuildATT(cfg, arena.Alloc)
		if err != nil {
			return err
		}
		doc.Kind = "att"
		doc.Allocations = allocsJSON(p.Allocations)
		doc.CmdBufAddr, doc.CmdBufSize, cmdbuf = hex64(p.CmdBufAddr), len(p.CmdBuf), p.CmdBuf
		for _, se := range p.SEBase {
			doc.TraceSEBuffers = append(doc.TraceSEBuffers, hex64(se))
		}
		ibs = p.Packets()
	} else {
		if a.marker != "" {
			return &usageError{"--codeobj-marker goes with --att"}
		}
		evs, err := pmcEvents(dev, a)
		if err != nil {
			return err
		}
		p, err := dev.BuildPMC(evs, arena.Alloc)
		if err != nil {
			return err
		}
		doc.Kind = "pmc"
		for _, e := range evs {
			b, _ := dev.Table.BlockByID(e.Block)
			doc.Events = append(doc.Events, eventOut{Block: b.Name, BlockEnum: uint32(e.Block), BlockIndex: e.Index, EventID: e.EventID, Flags: e.Flags})
		}
		doc.Allocations = allocsJSON(p.Allocations)
		doc.CmdBufAddr, doc.CmdBufSize, cmdbuf = hex64(p.CmdBufAddr), len(p.CmdBuf), p.CmdBuf
		doc.OutputAddr, doc.OutputSize = hex64(p.OutputAddr), p.OutputSize
		for i, s := range p.Samples() {
			it := iterOut{Seq: i, BlockName: uint32(s.Event.Block), BlockIndex: s.Event.Index, EventID: s.Event.EventID,
				Flags: s.Event.Flags, CounterID: s.CounterID, OutputSlot: s.Slot}
			for _, c := range s.Coords {
				it.Coords = append(it.Coords, coordOut{Pos: c.Pos, DimID: uint32(c.ID), Extent: c.Extent, Coord: c.Value, Name: c.ID.String()})
			}
			doc.IterateData = append(doc.IterateData, it)
		}
		ibs = p.Packets()
	}
	for _, ib := range ibs {
		doc.Packets = append(doc.Packets, packetJSON(ib))
	}
	var marker *aql.IB
	if a.marker != "" {
		m, err := parseMarker(a.marker)
		if err != nil {
			return err
		}
		if marker, err = dev.BuildCodeObjMarker(m, arena.Alloc); err != nil {
			return err
		}
		doc.CodeObjMarker = &markerOut{Allocation: hex64(marker.Addr), Packet: packetJSON(marker)}
	}
	switch a.format {
	case "bin":
		for _, ib := range ibs {
			if _, err := w.Write(ib.Packet.Bytes()); err != nil {
				return err
			}
		}
		_, err := w.Write(cmdbuf)
		return err
	case "text":
		return writePacketsText(w, dev, &doc, append(ibs, marker))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(&doc)
}

func writePacketsText(w io.Writer, dev *aql.Device, doc *packetsOut, ibs []*aql.IB) error {
	fmt.Fprintf(w, "# %s packets for %s (block table %s)\n", doc.Kind, dev, dev.Table.Label)
	for _, a := range doc.Allocations {
		fmt.Fprintf(w, "# allocation %d %-14s %s size %d flags %s\n", a.Order, a.Role, a.Addr, a.Size, a.Flags)
	}
	if doc.Kind == "pmc" {
		fmt.Fprintf(w, "# output buffer %s, %d bytes; command buffer %s, %d bytes\n", doc.OutputAddr, doc.OutputSize, doc.CmdBufAddr, doc.CmdBufSize)
	}
	names := func(r pm4.Reg) string { return dev.RegName(r) }
	for _, ib := range ibs {
		if ib == nil {
			continue
		}
		fmt.Fprintf(w, "\n== %s packet: IB @ 0x%x (%d dwords)\n   AQL:", ib.Name, ib.Addr, len(ib.DW))
		for _, v := range ib.Packet {
			fmt.Fprintf(w, " %08x", v)
		}
		fmt.Fprintln(w)
		for _, line := range strings.SplitAfter(pm4.Format(ib.DW, names), "\n") {
			if line != "" {
				fmt.Fprint(w, "  "+line)
			}
		}
	}
	return nil
}
