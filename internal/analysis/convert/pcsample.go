package convert

import (
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// PC samples from a database back into a spool (issue 34). A spool
// carries a sample as ROCR delivered it (a PC, the trap handler's
// correlation id naming a hardware queue slot) and the shim's record of
// which dispatch went to which slot; the writers resolve samples with
// model.ReadPCSamples. So each stored sample becomes a raw sample whose PC
// is its code object's load base plus its offset (the offset itself for a
// PC in no code object) and whose slot is one the spool gives its dispatch
// alone (PC_SAMPLE_DISPATCH). A sample is matched to the dispatch of its
// slot that started at or before it, as in a run: a stored sample earlier
// than its dispatch's start is left out (a run's never is). The
// instruction texts are the database's (pcTexts), not disassembled again.

// pcBatchSamples is how many samples one spool record carries, as the
// shim writes them.
const pcBatchSamples = 1000

// pcKey names an instruction across processes: the code object's URI
// (a file and the object's place in it) and the offset.
type pcKey struct {
	uri string
	off uint64
}

type pcText struct {
	text, comment string
	known         bool // the code object was readable (no "Unrecognized ..." comment)
}

// pcTexts are the stored instruction texts of every database converted.
type pcTexts map[pcKey]pcText

// instructions is model.Config.PCInstructions over the stored texts.
func (t pcTexts) instructions(s *model.PCSamples) model.PCInstructions {
	uris := make(map[uint64]string, len(s.CodeObjects))
	for _, c := range s.CodeObjects {
		uris[c.CodeObjectID] = string(c.URI)
	}
	return &storedInstructions{texts: t, uris: uris, samples: s}
}

// storedInstructions answers from the stored texts; a spool given as it
// is (a run's kept spool, not a database's) is disassembled as a run's.
type storedInstructions struct {
	texts    pcTexts
	uris     map[uint64]string
	samples  *model.PCSamples
	fallback model.PCInstructions
}

func (si *storedInstructions) Text(s *model.PCSample) (string, bool) {
	if s.CodeObjectID == 0 {
		return "", false
	}
	if t, ok := si.texts[pcKey{si.uris[s.CodeObjectID], s.Offset}]; ok {
		return t.text, t.known
	}
	if si.fallback == nil {
		si.fallback = output.DefaultPCInstructions(si.samples)
	}
	return si.fallback.Text(s)
}

// Comment is the stored Instruction_Comment.
func (si *storedInstructions) Comment(s *model.PCSample) string {
	if s.CodeObjectID == 0 {
		return ""
	}
	if t, ok := si.texts[pcKey{si.uris[s.CodeObjectID], s.Offset}]; ok {
		return t.comment
	}
	if si.fallback == nil {
		si.fallback = output.DefaultPCInstructions(si.samples)
	}
	return commentOf(si.fallback, s)
}

func (si *storedInstructions) NoObjdump() bool { return si.fallback != nil && si.fallback.NoObjdump() }

func (si *storedInstructions) Close() {
	if si.fallback != nil {
		si.fallback.Close()
	}
}

// pcSpooler turns one image's stored samples into spool records.
type pcSpooler struct {
	in    *rocpdread.Info
	texts pcTexts
	cos   map[int64]rocpdread.CodeObject
	// per spool: the dispatches given a slot, and the batch being filled
	slots map[*spoolWriter]map[uint64]uint64
	batch map[*spoolWriter]*tracing.PCSampleBatch
	order []*spoolWriter
}

func newPCSpooler(db *rocpdread.DB, in *rocpdread.Info, texts pcTexts) (*pcSpooler, error) {
	cos, err := db.CodeObjects(in)
	if err != nil {
		return nil, err
	}
	ps := &pcSpooler{in: in, texts: texts, cos: map[int64]rocpdread.CodeObject{},
		slots: map[*spoolWriter]map[uint64]uint64{}, batch: map[*spoolWriter]*tracing.PCSampleBatch{}}
	for _, c := range cos {
		ps.cos[c.ID] = c
	}
	return ps, nil
}

// slotOf is the trap handler's correlation id the spool gives a dispatch:
// its id spread over the slot (25 bits) and doorbell (10 bits) fields.
func slotOf(dispatch uint64) uint64 {
	return (dispatch>>25&0x3ff)<<32 | dispatch&0x1ffffff
}

func (ps *pcSpooler) add(w *spoolWriter, node uint32, s *rocpdread.PCSample) error {
	slots := ps.slots[w]
	if slots == nil {
		slots = map[uint64]uint64{}
		ps.slots[w] = slots
		ps.order = append(ps.order, w)
	}
	trap, ok := slots[s.DispatchID]
	if !ok {
		trap = slotOf(s.DispatchID)
		slots[s.DispatchID] = trap
		if err := w.add(tracing.PCSampleDispatch{DispatchID: s.DispatchID, TrapID: trap, AgentNode: node}); err != nil {
			return err
		}
	}
	pc, uri := s.Offset, ""
	if s.CodeObjectID != 0 {
		if c, ok := ps.cos[int64(s.CodeObjectID)]; ok {
			pc, uri = uint64(c.LoadBase)+s.Offset, c.URI
		}
		if ps.texts != nil {
			known := !strings.HasPrefix(s.Comment, "Unrecognized code object id")
			comment := s.Comment
			if !known {
				comment = ""
			}
			ps.texts[pcKey{uri, s.Offset}] = pcText{text: s.Instruction, comment: comment, known: known}
		}
	}
	method := tracing.PCSamplingHostTrap
	if s.Category == rocpdread.PCSampleCategories[1] {
		method = tracing.PCSamplingStochastic
	}
	b := ps.batch[w]
	if b != nil && (b.AgentNode != node || b.Method != method || b.Count() == pcBatchSamples) {
		if err := w.add(*b); err != nil {
			return err
		}
		b.Samples = b.Samples[:0]
		b.AgentNode, b.Method = node, method
	}
	if b == nil {
		b = &tracing.PCSampleBatch{AgentNode: node, Method: method}
		ps.batch[w] = b
	}
	b.Samples = tracing.PCSample{PC: pc, ExecMask: s.ExecMask,
		Workgroup: [3]uint32{s.Workgroup.X, s.Workgroup.Y, s.Workgroup.Z}, ChipletWave: s.Chiplet<<8 | s.WaveInGroup&0x3f,
		HWID: s.HWID, Snapshot: s.Snapshot, Timestamp: uint64(s.Timestamp), CorrelationID: trap}.Encode(b.Samples)
	return nil
}

// flush writes the samples still in batches.
func (ps *pcSpooler) flush() error {
	for _, w := range ps.order {
		if b := ps.batch[w]; b != nil && b.Count() > 0 {
			if err := w.add(*b); err != nil {
				return err
			}
			b.Samples = b.Samples[:0]
		}
	}
	return nil
}

// commentOf asks a disassembler for a sample's source line when it can
// give one.
func commentOf(ins model.PCInstructions, s *model.PCSample) string {
	if c, ok := ins.(interface{ Comment(*model.PCSample) string }); ok {
		return c.Comment(s)
	}
	return ""
}
