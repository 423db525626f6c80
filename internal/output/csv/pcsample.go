package csv

import (
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// pcSamplingHostTrapColumns are rocprofv3's pc_sampling_host_trap.csv
// columns (rocprofiler-sdk generateCSV.cpp).
var pcSamplingHostTrapColumns = []string{"Sample_Timestamp", "Exec_Mask", "Dispatch_Id", "Instruction",
	"Instruction_Comment", "Correlation_Id"}

// writePCSamples writes pc_sampling_host_trap.csv: every host-trap sample
// of the group's processes resolved to its dispatch, in the order ROCR
// delivered them (rocprofv3 writes them in its buffer's order). The
// Instruction column is the disassembled instruction at the PC (empty
// without llvm-objdump); a PC in no code object the CLI could read gets
// rocprofv3's comment for an unrecognised code object.
func writePCSamples(cfg *model.Config, prefix string, procs []*csvProcess, res *model.Result) error {
	var f *csvFile
	for _, p := range procs {
		if p.PCSampleCount == 0 && p.PCSamplesLost == 0 {
			continue
		}
		s, err := model.ReadPCSamples(p.Catalogue, cfg.PCSampleKernel)
		if err != nil || s == nil {
			continue
		}
		sum := model.PCSamplingSummary{PID: int(p.Info.PID), Samples: uint64(len(s.Samples)), Lost: s.Lost,
			Unmatched: s.Unmatched, Filtered: s.Filtered}
		if len(s.Samples) > 0 {
			if f == nil {
				f = newCSVFile(cfg.FS, prefix, "pc_sampling_host_trap", "PC_SAMPLING_HOST_TRAP", pcSamplingHostTrapColumns)
			}
			ins := cfg.NewPCInstructions(s)
			sum.NoObjdump = ins.NoObjdump()
			for i := range s.Samples {
				x := &s.Samples[i]
				text, known := ins.Text(x)
				b := f.begin()
				b = appendUint(b, x.Timestamp)
				b = appendUint(b, x.ExecMask)
				b = appendUint(b, x.DispatchID)
				b = appendQuoted(b, text)
				b = append(b, ',')
				if known {
					b = appendQuoted(b, "")
				} else {
					b = appendQuoted(b, "Unrecognized code object id, physical virtual address of PC:"+
						strconv.FormatUint(x.Offset, 10))
				}
				b = append(b, ',')
				b = appendDecimal(b, p.CID(x.CorrelationID))
				f.end(b)
				if text == "" {
					sum.NoText++
				}
			}
			ins.Close()
		}
		res.PCSampling = append(res.PCSampling, sum)
	}
	if f == nil {
		return nil
	}
	err := f.close()
	if f.created() {
		res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name,
			Domain: f.domain, Records: f.rows, Bytes: f.bytes})
	}
	return err
}
