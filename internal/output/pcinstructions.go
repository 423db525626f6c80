package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/att"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
)

// pcInstructions disassembles the sampled PCs of a spool: its code objects
// are read from their file:// URIs (a memory:// code object was in the
// app's memory, gone after it) and listed with llvm-objdump
// (internal/att), in the CLI, never in the app.
type pcInstructions struct {
	cos       *att.CodeObjects
	dir       string
	known     map[uint64]bool
	noObjdump bool
}

// newPCInstructions is model.Config.PCInstructions.
func newPCInstructions(s *model.PCSamples) model.PCInstructions {
	pi := &pcInstructions{known: map[uint64]bool{}}
	dir, err := os.MkdirTemp("", "rocprof-go-pcs-")
	if err != nil {
		return pi
	}
	pi.dir = dir
	var entries []att.CodeObject
	for _, c := range s.CodeObjects {
		data, err := model.FileCodeObject(string(c.URI))
		if err != nil {
			continue
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
