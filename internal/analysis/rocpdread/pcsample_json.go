package rocpdread

import (
	"encoding/json"
	"strconv"
)

// parsePCSampleExt reads a PC sample's extdata. rocprof-go writes it in a
// fixed shape (numbers, strings, booleans, the wrkgrp_id object and the
// snapshot array), which this parser reads without reflection, a few
// times faster than encoding/json over millions of samples; anything else
// goes to encoding/json. Texts are interned: a run has few distinct
// instructions.
func parsePCSampleExt(b []byte, e *PCSampleExt, texts map[string]string) error {
	*e = PCSampleExt{}
	p := extParser{b: b, texts: texts}
	if !p.object(e, false) || p.i != len(p.b) {
		*e = PCSampleExt{}
		return json.Unmarshal(b, e)
	}
	return nil
}

type extParser struct {
	b     []byte
	i     int
	texts map[string]string
}

func (p *extParser) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *extParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string; escapes are decoded by strconv.Unquote.
func (p *extParser) str() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start, esc := p.i, false
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			esc = true
			p.i += 2
			continue
		case '"':
			s := p.b[start:p.i]
			p.i++
			if esc {
				u, err := strconv.Unquote(`"` + string(s) + `"`)
				if err != nil {
					return nil, false
				}
				return []byte(u), true
			}
			return s, true
		}
		p.i++
	}
	return nil, false
}

func (p *extParser) text() (string, bool) {
	s, ok := p.str()
	if !ok {
		return "", false
	}
	if t, ok := p.texts[string(s)]; ok {
		return t, true
	}
	t := string(s)
	if len(p.texts) < 1<<16 {
		p.texts[t] = t
	}
	return t, true
}

func (p *extParser) uint() (uint64, bool) {
	p.ws()
	start := p.i
	var v uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
		p.i++
	}
	return v, p.i > start
}

func (p *extParser) boolean() (bool, bool) {
	p.ws()
	switch {
	case len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "true":
		p.i += 4
		return true, true
	case len(p.b)-p.i >= 5 && string(p.b[p.i:p.i+5]) == "false":
		p.i += 5
		return false, true
	}
	return false, false
}

// object reads the extdata object (or, nested, wrkgrp_id).
func (p *extParser) object(e *PCSampleExt, workgroup bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	for {
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return false
		}
		var v uint64
		switch k := string(key); {
		case workgroup:
			if v, ok = p.uint(); !ok || v > 1<<32-1 {
				return false
			}
			switch k {
			case "x":
				e.Workgroup.X = uint32(v)
			case "y":
				e.Workgroup.Y = uint32(v)
			case "z":
				e.Workgroup.Z = uint32(v)
			}
		case k == "wrkgrp_id":
			ok = p.object(e, true)
		case k == "instruction":
			e.Instruction, ok = p.text()
		case k == "instruction_comment":
			e.Comment, ok = p.text()
		case k == "inst_type":
			e.InstType, ok = p.text()
		case k == "stall_reason":
			e.StallReason, ok = p.text()
		case k == "wave_issued":
			var b bool
			b, ok = p.boolean()
			e.WaveIssued = &b
		case k == "dual_issue_valu":
			e.DualIssueVALU, ok = p.boolean()
		case k == "snapshot":
			ok = p.eat('[')
			for i := 0; ok && i < 3; i++ {
				if i > 0 {
					ok = p.eat(',')
				}
				if ok {
					v, ok = p.uint()
					e.Snapshot[i] = uint32(v)
					ok = ok && v <= 1<<32-1
				}
			}
			ok = ok && p.eat(']')
		default:
			if v, ok = p.uint(); !ok {
				return false
			}
			small := v <= 1<<32-1
			switch k {
			case "dispatch_id":
				e.DispatchID = v
			case "code_object_id":
				e.CodeObjectID = v
			case "code_object_offset":
				e.Offset = v
			case "pc":
				e.PC = v
			case "exec_mask":
				e.ExecMask = v
			case "wave_in_grp":
				e.WaveInGroup, ok = uint32(v), small
			case "chiplet":
				e.Chiplet, ok = uint32(v), small
			case "hw_id":
				e.HWID, ok = uint32(v), small
			case "wave_count":
				e.WaveCount, ok = uint32(v), small
			default:
				return false // a key this parser does not know: encoding/json
			}
		}
		if !ok {
			return false
		}
		if p.eat('}') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}
