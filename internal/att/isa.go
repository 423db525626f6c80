package att

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// CodeObject is one loaded code object as the shim records it in
// <pid>_att_code_objects.jsonl (one JSON object per line) next to its
// <pid>_agent_<node>_code_object_id_<id>.out dump.
type CodeObject struct {
	ID        uint64 `json:"id"`
	Agent     uint32 `json:"agent"`
	LoadBase  uint64 `json:"load_base"`
	LoadSize  uint64 `json:"load_size"`
	LoadDelta int64  `json:"load_delta"`
	File      string `json:"file"` // the dump's name, relative to the index
	URI       string `json:"uri"`
}

// CodeObjectIndexName is the per-process code-object index file name.
func CodeObjectIndexName(pid int) string { return fmt.Sprintf("%d_att_code_objects.jsonl", pid) }

// ReadCodeObjectIndex reads an index written by the shim.
func ReadCodeObjectIndex(path string) ([]CodeObject, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []CodeObject
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c CodeObject
		if err := json.Unmarshal(line, &c); err != nil {
			continue // a line cut by a crash: the others still count
		}
		out = append(out, c)
	}
	return out, nil
}

// Symbol is an ELF symbol of a code object (kernels and their descriptors).
type Symbol struct {
	Name        string
	Value, Size uint64
	Func        bool
}

type codeObject struct {
	CodeObject
	path  string
	once  sync.Once
	data  []byte
	elf   *elf.File
	lines map[uint64]Line
	syms  []Symbol // sorted by Value
	err   error
}

// CodeObjects answers the decoder's instruction requests from the dumped
// code objects: llvm-objdump's disassembly when it is installed, otherwise
// the raw instruction words.
type CodeObjects struct {
	objs    []*codeObject // by load base
	byID    map[uint64]*codeObject
	Objdump string // llvm-objdump path; "" = raw words only
}

// NewCodeObjects loads the index entries; dir is where the dumps are.
func NewCodeObjects(dir string, entries []CodeObject) *CodeObjects {
	c := &CodeObjects{byID: map[uint64]*codeObject{}}
	for _, e := range entries {
		co := &codeObject{CodeObject: e, path: filepath.Join(dir, e.File)}
		c.objs = append(c.objs, co)
		c.byID[e.ID] = co
	}
	// By base, then id: a range reused by a later load resolves to the latest.
	sort.Slice(c.objs, func(i, j int) bool {
		if c.objs[i].LoadBase != c.objs[j].LoadBase {
			return c.objs[i].LoadBase < c.objs[j].LoadBase
		}
		return c.objs[i].ID < c.objs[j].ID
	})
	if p, err := exec.LookPath("llvm-objdump"); err == nil {
		c.Objdump = p
	}
	return c
}

// Resolve maps a decoder PC onto (code object, ELF vaddr).
func (c *CodeObjects) Resolve(pc PC) (*codeObject, uint64, bool) {
	if pc.CodeObj != 0 {
		co := c.byID[pc.CodeObj]
		return co, pc.Addr, co != nil
	}
	i := sort.Search(len(c.objs), func(i int) bool { return c.objs[i].LoadBase > pc.Addr }) - 1
	if i < 0 {
		return nil, 0, false
	}
	co := c.objs[i]
	if pc.Addr >= co.LoadBase+co.LoadSize {
		return nil, 0, false
	}
	return co, uint64(int64(pc.Addr) - co.LoadDelta), true
}

// Normalize returns the (code object id, vaddr) form of a PC when it can be
// resolved, the PC itself otherwise.
func (c *CodeObjects) Normalize(pc PC) PC {
	if co, v, ok := c.Resolve(pc); ok {
		return PC{Addr: v, CodeObj: co.ID}
	}
	return pc
}

// Instruction implements ISA.
func (c *CodeObjects) Instruction(pc PC) (Line, error) {
	co, vaddr, ok := c.Resolve(pc)
	if !ok {
		return Line{}, fmt.Errorf("address 0x%x is in no loaded code object", pc.Addr)
	}
	co.load(c.Objdump)
	if co.err != nil {
		return Line{}, co.err
	}
	if l, ok := co.lines[vaddr]; ok {
		return l, nil
	}
	// Not an instruction llvm-objdump listed (or no llvm-objdump): the raw word.
	b := co.bytesAt(vaddr, 4)
	if b == nil {
		return Line{}, fmt.Errorf("code object %d has no bytes at 0x%x", co.ID, vaddr)
	}
	return Line{Text: fmt.Sprintf(".long 0x%08x", binary.LittleEndian.Uint32(b)), Size: 4}, nil
}

// SymbolAt returns the symbol starting exactly at the PC, if any.
func (c *CodeObjects) SymbolAt(pc PC) (Symbol, bool) {
	co, vaddr, ok := c.Resolve(pc)
	if !ok {
		return Symbol{}, false
	}
	co.load(c.Objdump)
	for _, s := range co.syms {
		if s.Value == vaddr {
			return s, true
		}
	}
	return Symbol{}, false
}

func (co *codeObject) load(objdump string) {
	co.once.Do(func() {
		co.data, co.err = os.ReadFile(co.path)
		if co.err != nil {
			return
		}
		co.elf, co.err = elf.NewFile(bytes.NewReader(co.data))
		if co.err != nil {
			co.err = fmt.Errorf("code object %d (%s): %w", co.ID, co.path, co.err)
			return
		}
		if syms, err := co.elf.Symbols(); err == nil {
			seen := map[string]bool{}
			for _, s := range syms {
				t := elf.ST_TYPE(s.Info)
				if (t != elf.STT_FUNC && t != elf.STT_OBJECT) || s.Name == "" || seen[s.Name] {
					continue
				}
				seen[s.Name] = true
				co.syms = append(co.syms, Symbol{Name: s.Name, Value: s.Value, Size: s.Size, Func: t == elf.STT_FUNC})
			}
			sort.Slice(co.syms, func(i, j int) bool { return co.syms[i].Value < co.syms[j].Value })
		}
		co.lines = map[uint64]Line{}
		if objdump != "" {
			if out, err := exec.Command(objdump, "-d", co.path).Output(); err == nil {
				parseObjdump(out, co.lines)
			}
		}
	})
}

// bytesAt reads n bytes at an ELF virtual address.
func (co *codeObject) bytesAt(vaddr uint64, n int) []byte {
	for _, p := range co.elf.Progs {
		if p.Type != elf.PT_LOAD || vaddr < p.Vaddr || vaddr+uint64(n) > p.Vaddr+p.Filesz {
			continue
		}
		off := p.Off + (vaddr - p.Vaddr)
		if off+uint64(n) > uint64(len(co.data)) {
			return nil
		}
		return co.data[off : off+uint64(n)]
	}
	return nil
}

// parseObjdump reads llvm-objdump's AMDGPU listing: each instruction line is
// "\t<text>  // <ADDR>: <word> [<word>...] [<target>]".
func parseObjdump(out []byte, lines map[uint64]Line) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		s := sc.Text()
		if !strings.HasPrefix(s, "\t") {
			continue
		}
		text, comment, ok := strings.Cut(s, "//")
		if !ok {
			continue
		}
		addrStr, words, ok := strings.Cut(strings.TrimSpace(comment), ":")
		if !ok {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimSpace(addrStr), 16, 64)
		if err != nil {
			continue
		}
		n := 0
		for _, w := range strings.Fields(words) {
			if len(w) != 8 {
				break
			}
			if _, err := strconv.ParseUint(w, 16, 32); err != nil {
				break
			}
			n++
		}
		if n == 0 {
			continue
		}
		lines[addr] = Line{Text: strings.TrimSpace(text), Size: uint64(4 * n)}
	}
}
