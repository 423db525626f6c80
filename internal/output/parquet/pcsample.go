package parquet

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// PC samples (issue 34): one file per method, as the CSV's
// pc_sampling_host_trap.csv and pc_sampling_stochastic.csv, named and
// placed as a domain's (<prefix>_pc_sampling_host_trap.parquet; with the
// hive layout domain=pc_sampling_host_trap/rank=<n>/host=<h>/). One row
// per sample, in the order ROCR delivered them.

// pcFiles are the two files' names, host trap first.
var pcFiles = [2]struct{ name, domain string }{
	{"pc_sampling_host_trap", "PC_SAMPLING_HOST_TRAP"},
	{"pc_sampling_stochastic", "PC_SAMPLING_STOCHASTIC"},
}

var pqPCColumns = []arrow.Field{pqI32("pid"), pqU32("tid"), pqU32("agent_id"), pqU64("dispatch_id"),
	pqU64("correlation_id"), pqU64("kernel_id"), pqStr("kernel_name"), pqU64("timestamp_ns"),
	pqU64("code_object_id"), pqU64("code_object_offset"), pqU64("pc"), pqU64("exec_mask"),
	pqU32("workgroup_x"), pqU32("workgroup_y"), pqU32("workgroup_z"), pqU32("wave_in_group"),
	pqU32("chiplet"), pqU32("hw_id"), pqStr("instruction"), pqStr("instruction_comment")}

// pqPCSchemas: host trap, then stochastic with the snapshot's fields
// (wave_issued and dual_issue_valu 0 or 1; inst_type and stall_reason
// rocprofv3's names, as its CSV).
var pqPCSchemas = [2]*arrow.Schema{
	arrow.NewSchema(pqPCColumns, nil),
	arrow.NewSchema(append(append([]arrow.Field(nil), pqPCColumns...), pqU32("wave_issued"), pqStr("inst_type"),
		pqStr("stall_reason"), pqU32("wave_count"), pqU32("dual_issue_valu")), nil),
}

// pcTable returns a method's table, creating its file on first use.
func (w *pqWriter) pcTable(m int) (*pqTable, error) {
	if t := w.pc[m]; t != nil {
		return t, nil
	}
	t, err := newPQTable(parquetNamePath(w.prefix, pcFiles[m].name, w.opts), pqPCSchemas[m], w.slots)
	if err != nil {
		return nil, fmt.Errorf("parquet %s: %w", pcFiles[m].name, err)
	}
	w.pc[m] = t
	return t, nil
}

// pcRows writes a process's PC samples.
func (w *pqWriter) pcRows(p *model.Catalogue) error {
	if p.PCSampleCount == 0 {
		return nil
	}
	s, err := model.ReadPCSamples(p, p.Config.PCSampleKernel)
	if err != nil || s == nil || len(s.Samples) == 0 {
		return err
	}
	ins := p.Config.NewPCInstructions(s)
	defer ins.Close()
	// Each distinct instruction's text once, and an id for the batches'
	// dictionaries.
	type inst struct{ co, off uint64 }
	type text struct {
		id            uint64
		text, comment string
	}
	texts := map[inst]*text{}
	for i := range s.Samples {
		x := &s.Samples[i]
		m := 0
		if x.Method == tracing.PCSamplingStochastic {
			m = 1
		}
		t, err := w.pcTable(m)
		if err != nil {
			return err
		}
		k := inst{x.CodeObjectID, x.Offset}
		tx := texts[k]
		if tx == nil {
			tx = &text{id: uint64(len(texts))}
			var known bool
			tx.text, known = ins.Text(x)
			if known {
				tx.comment = commentOf(ins, x)
			} else {
				tx.comment = "Unrecognized code object id, physical virtual address of PC:" + strconv.FormatUint(x.Offset, 10)
			}
			texts[k] = tx
		}
		b := t.batch()
		n := b.n
		b.i32(0, n, p.Info.PID)
		b.u32(1, n, x.TID)
		b.u32(2, n, x.AgentNode)
		b.u64(3, n, x.DispatchID)
		b.u64(4, n, p.CID(x.CorrelationID))
		b.u64(5, n, x.KernelID)
		// kernel_name as kernels.parquet names the sample's dispatch:
		// with --kernel-rename its enclosing ROCTx range (the sample
		// carries the dispatch's thread and raw correlation id).
		if p.Renamer != nil {
			t.dictString(6, n, p.Renamer.Name(x.TID, x.CorrelationID, p.KernelName(x.KernelID)))
		} else if !t.dictID(6, n, x.KernelID) {
			t.dictAdd(6, n, x.KernelID, p.KernelName(x.KernelID))
		}
		b.u64(7, n, x.Timestamp)
		b.u64(8, n, x.CodeObjectID)
		b.u64(9, n, x.Offset)
		b.u64(10, n, x.PC)
		b.u64(11, n, x.ExecMask)
		b.u32(12, n, x.Workgroup[0])
		b.u32(13, n, x.Workgroup[1])
		b.u32(14, n, x.Workgroup[2])
		b.u32(15, n, x.WaveInGroup())
		b.u32(16, n, x.ChipletWave>>8&0x3f)
		b.u32(17, n, x.HWID)
		if !t.dictID(18, n, tx.id) {
			t.dictAdd(18, n, tx.id, tx.text)
		}
		if !t.dictID(19, n, tx.id) {
			t.dictAdd(19, n, tx.id, tx.comment)
		}
		if m == 1 {
			b.u32(20, n, flag(x.WaveIssued))
			if !t.dictID(21, n, uint64(x.InstType)) {
				t.dictAdd(21, n, uint64(x.InstType), x.InstType.Name())
			}
			if !t.dictID(22, n, uint64(x.StallReason)) {
				t.dictAdd(22, n, uint64(x.StallReason), x.StallReason.Name())
			}
			b.u32(23, n, x.WaveCount)
			b.u32(24, n, flag(x.DualIssueVALU))
		}
		b.n++
		if b.n == pqBatchRows {
			if err := t.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func flag(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// commentOf is the disassembler's source line of a sample's PC, when it
// gives them.
func commentOf(ins model.PCInstructions, s *model.PCSample) string {
	if c, ok := ins.(interface{ Comment(*model.PCSample) string }); ok {
		return c.Comment(s)
	}
	return ""
}
