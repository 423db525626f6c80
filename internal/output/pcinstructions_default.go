package output

import "github.com/rocprof-go/rocprof-go/internal/output/model"

// DefaultPCInstructions is the disassembler Write uses when the
// configuration names none (llvm-objdump over the file:// code objects):
// convert hands it the samples of spools that are not from a database,
// whose instruction texts it does not have stored.
func DefaultPCInstructions(s *model.PCSamples) model.PCInstructions { return newPCInstructions(s) }
