package csv

import (
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// pcSamplingHostTrapColumns are rocprofv3's pc_sampling_host_trap.csv
// columns (rocprofiler-sdk generateCSV.cpp).
var pcSamplingHostTrapColumns = []string{"Sample_Timestamp", "Exec_Mask", "Dispatch_Id", "Instruction",
	"Instruction_Comment", "Correlation_Id"}

// pcSamplingStochasticColumns are rocprofv3's pc_sampling_stochastic.csv
// columns: host trap's and the snapshot's.
var pcSamplingStochasticColumns = append(append([]string(nil), pcSamplingHostTrapColumns...),
	"Wave_Issued_Instruction", "Instruction_Type", "Stall_Reason", "Wave_Count")

// writePCSamples writes pc_sampling_host_trap.csv and
// pc_sampling_stochastic.csv: every sample of the group's processes
// resolved to its dispatch, in the order ROCR delivered them (rocprofv3
// writes them in its buffer's order), to its method's file. The
// Instruction column is the disassembled instruction at the PC (empty
// without llvm-objdump); a PC in no code object the CLI could read gets
// rocprofv3's comment for an unrecognised code object. Stochastic rows add
// the snapshot: issued (0/1), rocprofiler-sdk's names of the instruction
// type and the not-issued reason, and the CU's wave count.
func writePCSamples(cfg *model.Config, prefix string, procs []*csvProcess, res *model.Result) error {
	var files [2]*csvFile // host trap, stochastic
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
			ins := cfg.NewPCInstructions(s)
			sum.NoObjdump = ins.NoObjdump()
			for i := range s.Samples {
				x := &s.Samples[i]
				stochastic := x.Method == tracing.PCSamplingStochastic
				fi := 0
				if stochastic {
					fi = 1
				}
				f := files[fi]
				if f == nil {
					if stochastic {
						f = newCSVFile(cfg.FS, prefix, "pc_sampling_stochastic", "PC_SAMPLING_STOCHASTIC",
							pcSamplingStochasticColumns)
					} else {
						f = newCSVFile(cfg.FS, prefix, "pc_sampling_host_trap", "PC_SAMPLING_HOST_TRAP",
							pcSamplingHostTrapColumns)
					}
					files[fi] = f
				}
				text, known := ins.Text(x)
				b := f.begin()
				b = appendUint(b, x.Timestamp)
				b = appendUint(b, x.ExecMask)
				b = appendUint(b, x.DispatchID)
				b = appendQuoted(b, text)
				b = append(b, ',')
				if known {
					b = appendQuoted(b, ins.Comment(x))
				} else {
					b = appendQuoted(b, "Unrecognized code object id, physical virtual address of PC:"+
						strconv.FormatUint(x.Offset, 10))
				}
				b = append(b, ',')
				b = appendDecimal(b, p.CID(x.CorrelationID))
				if stochastic {
					issued := uint64(0)
					if x.WaveIssued {
						issued = 1
					}
					b = append(b, ',')
					b = appendUint(b, issued)
					b = appendQuoted(b, x.InstType.Name())
					b = append(b, ',')
					b = appendQuoted(b, x.StallReason.Name())
					b = append(b, ',')
					b = appendDecimal(b, uint64(x.WaveCount))
				}
				f.end(b)
				if text == "" {
					sum.NoText++
				}
			}
			ins.Close()
		}
		res.PCSampling = append(res.PCSampling, sum)
	}
	var err error
	for _, f := range files {
		if f == nil {
			continue
		}
		if e := f.close(); e != nil && err == nil {
			err = e
		}
		if f.created() {
			res.Files = append(res.Files, model.File{Path: f.path, Format: model.FormatCSV, Name: f.name,
				Domain: f.domain, Records: f.rows, Bytes: f.bytes})
		}
	}
	return err
}
