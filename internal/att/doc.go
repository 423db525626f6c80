// Package att decodes thread traces (rocprofv3's --att) after the
// application ended: it loads AMD's librocprof-trace-decoder.so with dlopen,
// feeds it each shader engine's raw .att file, answers its instruction
// requests from the dumped code objects (llvm-objdump's disassembly, or the
// raw words), and writes what rocprofv3 writes from the decoded records:
// ui_output_agent_<agent>_dispatch_<id>/ (code.json, filenames.json,
// occupancy.json, per-wave se*_sm*_sl*_wv*.json, wstates*.json,
// se*_perfcounter.json) and stats_ui_output_agent_<agent>_dispatch_<id>.csv.
// Both are written into an internal/atomicfile Stage and renamed into place
// when complete.
package att
