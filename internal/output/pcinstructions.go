package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/att"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// pcInstructions disassembles the sampled PCs of a spool: its code objects
// are read from their file:// URIs, or, for a memory:// one (in the app's
// memory, gone after it), from the copy the shim kept beside the spool
// (internal/hsa pcs_codeobj.go), and listed with llvm-objdump
// (internal/att), in the CLI, never in the app. Their DWARF line tables
// give the comments.
type pcInstructions struct {
	cos       *att.CodeObjects
	dir       string
	known     map[uint64]bool
	lines     map[uint64]*pcLines
	noObjdump bool
}

// pcsCodeObjectSuffix names the shim's copy of a memory:// code object:
// <spool path><suffix><code object id> (internal/hsa pcs_codeobj.go spells
// the same name).
const pcsCodeObjectSuffix = model.PCSCodeObjectSuffix

// pcsCodeObjectBytes reads a sampled code object: its file, or the shim's
// copy of a memory:// one.
func pcsCodeObjectBytes(s *model.PCSamples, c *tracing.CodeObject) ([]byte, error) {
	return model.CodeObjectBytes(s.Spool, c)
}

// newPCInstructions is model.Config.PCInstructions.
func newPCInstructions(s *model.PCSamples) model.PCInstructions {
	pi := &pcInstructions{known: map[uint64]bool{}, lines: map[uint64]*pcLines{}}
	dir, err := os.MkdirTemp("", "rocprof-go-pcs-")
	if err != nil {
		return pi
	}
	pi.dir = dir
	var entries []att.CodeObject
	for i := range s.CodeObjects {
		c := &s.CodeObjects[i]
		data, err := pcsCodeObjectBytes(s, c)
		if err != nil {
			continue
		}
		if l := readPCLines(data); l != nil {
			pi.lines[c.CodeObjectID] = l
		}
		name := fmt.Sprintf("co_%d.out", c.CodeObjectID)
		if os.WriteFile(filepath.Join(dir, name), data, 0o600) != nil {
			continue
		}
		pi.known[c.CodeObjectID] = true
		entries = append(entries, att.CodeObject{ID: c.CodeObjectID, Agent: c.AgentNode, LoadBase: c.LoadBase,
			LoadSize: c.LoadSize, LoadDelta: int64(c.LoadDelta), File: name, URI: string(c.URI)})
	}
	pi.cos = att.NewCodeObjects(dir, entries)
	if pi.cos.Objdump == "" {
		pi.cos.Objdump = model.VersionedObjdump()
	}
	pi.noObjdump = pi.cos.Objdump == ""
	return pi
}

func (pi *pcInstructions) NoObjdump() bool { return pi.noObjdump }

// Comment is the source line of the sample's PC (rocprofv3's
// Instruction_Comment): "" when its code object has no line table.
func (pi *pcInstructions) Comment(s *model.PCSample) string {
	return pi.lines[s.CodeObjectID].at(s.VAddr)
}

func (pi *pcInstructions) Close() {
	if pi.dir != "" {
		_ = os.RemoveAll(pi.dir)
	}
}

func (pi *pcInstructions) Text(s *model.PCSample) (string, bool) {
	if pi.cos == nil || s.CodeObjectID == 0 || !pi.known[s.CodeObjectID] {
		return "", false
	}
	if pi.noObjdump {
		return "", true
	}
	l, err := pi.cos.Instruction(att.PC{Addr: s.VAddr, CodeObj: s.CodeObjectID})
	if err != nil || strings.HasPrefix(l.Text, ".long ") {
		return "", true
	}
	return l.Text, true
}
