package tracing

import "math"

// The encoders write published records exactly as the preload library does;
// the Go side uses them for synthetic spools (tests, benchmarks, fuzz seeds).

func pad8(n int) int { return (n + 7) &^ 7 }

// begin appends a published header for a record of fixed+tailLen bytes and
// returns the buffer and the offset of the record start.
func begin(b []byte, k Kind, tailLen int) ([]byte, int) {
	size := pad8(int(fixedSize[k]) + tailLen)
	start := len(b)
	b = append(b, make([]byte, size)...)
	le.PutUint32(b[start:], uint32(size))
	le.PutUint16(b[start+4:], uint16(k))
	b[start+6] = 1
	b[start+7] = commitByte
	return b, start
}

// AppendBinary appends the published record.
func (s String) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindString, len(s.Value))
	r := b[o:]
	le.PutUint32(r[8:], s.Table)
	le.PutUint32(r[12:], uint32(len(s.Value)))
	le.PutUint64(r[16:], s.ID)
	copy(r[24:], s.Value)
	return b, nil
}

// AppendBinary appends the published record; the kind (HIP, HSA or RCCL)
// follows from the domain.
func (a APICall) AppendBinary(b []byte) ([]byte, error) {
	k := KindHSAAPI
	switch a.Domain {
	case DomainHIPRuntime, DomainHIPCompiler:
		k = KindHIPAPI
	case DomainRCCL:
		k = KindRCCLAPI
	}
	b, o := begin(b, k, len(a.Args))
	r := b[o:]
	le.PutUint32(r[8:], uint32(a.Domain))
	le.PutUint32(r[12:], a.Function)
	le.PutUint32(r[16:], a.TID)
	le.PutUint32(r[20:], uint32(len(a.Args)))
	le.PutUint64(r[24:], a.CorrelationID)
	le.PutUint64(r[32:], a.Start)
	le.PutUint64(r[40:], a.End)
	copy(r[48:], a.Args)
	return b, nil
}

// AppendBinary appends the published record.
func (m Marker) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindMarker, len(m.Message))
	r := b[o:]
	le.PutUint32(r[8:], uint32(m.Domain))
	le.PutUint32(r[12:], uint32(m.Function))
	le.PutUint32(r[16:], m.TID)
	le.PutUint32(r[20:], uint32(len(m.Message)))
	le.PutUint64(r[24:], m.CorrelationID)
	le.PutUint64(r[32:], m.Start)
	le.PutUint64(r[40:], m.End)
	le.PutUint64(r[48:], m.RangeID)
	copy(r[56:], m.Message)
	return b, nil
}

// AppendBinary appends the published record.
func (d KernelDispatch) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindKernelDispatch, 0)
	r := b[o:]
	le.PutUint32(r[8:], d.AgentNode)
	le.PutUint32(r[12:], d.TID)
	le.PutUint64(r[16:], d.QueueID)
	le.PutUint64(r[24:], d.StreamID)
	le.PutUint64(r[32:], d.DispatchID)
	le.PutUint64(r[40:], d.KernelID)
	le.PutUint64(r[48:], d.CorrelationID)
	le.PutUint64(r[56:], d.Start)
	le.PutUint64(r[64:], d.End)
	for i := 0; i < 3; i++ {
		le.PutUint32(r[72+4*i:], d.Grid[i])
		le.PutUint32(r[84+4*i:], d.Workgroup[i])
	}
	le.PutUint32(r[96:], d.GroupSegmentSize)
	le.PutUint32(r[100:], d.PrivateSegmentSize)
	le.PutUint32(r[104:], d.VGPRCount)
	le.PutUint32(r[108:], d.AGPRCount)
	le.PutUint32(r[112:], d.SGPRCount)
	le.PutUint32(r[116:], d.PacketIndex)
	return b, nil
}

// AppendBinary appends the published record.
func (c MemoryCopy) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindMemoryCopy, 0)
	r := b[o:]
	le.PutUint32(r[8:], uint32(c.Direction))
	le.PutUint32(r[12:], c.SrcAgentNode)
	le.PutUint32(r[16:], c.DstAgentNode)
	le.PutUint32(r[20:], c.TID)
	le.PutUint64(r[24:], c.Bytes)
	le.PutUint64(r[32:], c.StreamID)
	le.PutUint64(r[40:], c.CorrelationID)
	le.PutUint64(r[48:], c.Start)
	le.PutUint64(r[56:], c.End)
	le.PutUint64(r[64:], c.SrcAddress)
	le.PutUint64(r[72:], c.DstAddress)
	return b, nil
}

// AppendBinary appends the published record.
func (m MemoryAllocation) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindMemoryAllocation, 0)
	r := b[o:]
	le.PutUint32(r[8:], uint32(m.Operation))
	le.PutUint32(r[12:], m.AgentNode)
	le.PutUint32(r[16:], m.TID)
	le.PutUint64(r[24:], m.Address)
	le.PutUint64(r[32:], m.Size)
	le.PutUint64(r[40:], m.CorrelationID)
	le.PutUint64(r[48:], m.Start)
	le.PutUint64(r[56:], m.End)
	return b, nil
}

// AppendBinary appends the published record.
func (s ScratchMemory) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindScratchMemory, 0)
	r := b[o:]
	le.PutUint32(r[8:], uint32(s.Operation))
	le.PutUint32(r[12:], s.AgentNode)
	le.PutUint32(r[16:], s.TID)
	le.PutUint32(r[20:], s.Flags)
	le.PutUint64(r[24:], s.QueueID)
	le.PutUint64(r[32:], s.Size)
	le.PutUint64(r[40:], s.CorrelationID)
	le.PutUint64(r[48:], s.Start)
	le.PutUint64(r[56:], s.End)
	return b, nil
}

// AppendBinary appends the published record.
func (k KernelSymbol) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindKernelSymbol, len(k.Name))
	r := b[o:]
	le.PutUint64(r[8:], k.KernelID)
	le.PutUint64(r[16:], k.CodeObjectID)
	le.PutUint64(r[24:], k.KernelObject)
	le.PutUint32(r[32:], k.KernargSize)
	le.PutUint32(r[36:], k.GroupSegmentSize)
	le.PutUint32(r[40:], k.PrivateSegmentSize)
	le.PutUint32(r[44:], k.VGPRCount)
	le.PutUint32(r[48:], k.AGPRCount)
	le.PutUint32(r[52:], k.SGPRCount)
	le.PutUint32(r[56:], uint32(len(k.Name)))
	le.PutUint32(r[60:], uint32(k.EntryOffset))
	copy(r[64:], k.Name)
	return b, nil
}

// AppendBinary appends the published record.
func (c CodeObject) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindCodeObject, len(c.URI))
	r := b[o:]
	le.PutUint64(r[8:], c.CodeObjectID)
	le.PutUint32(r[16:], uint32(c.Operation))
	le.PutUint32(r[20:], c.AgentNode)
	le.PutUint32(r[24:], c.StorageType)
	le.PutUint32(r[28:], uint32(len(c.URI)))
	le.PutUint64(r[32:], c.LoadBase)
	le.PutUint64(r[40:], c.LoadSize)
	le.PutUint64(r[48:], c.LoadDelta)
	le.PutUint64(r[56:], c.Timestamp)
	copy(r[64:], c.URI)
	return b, nil
}

// AppendBinary appends the published record; names longer than 63 bytes are
// cut as the C struct would cut them.
func (a AgentInfo) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindAgentInfo, 0)
	r := b[o:]
	for i, v := range a.Values {
		le.PutUint64(r[8+8*i:], v)
	}
	names := r[8+8*AgentNumericFields:]
	for i, s := range []string{a.Name, a.VendorName, a.ProductName, a.ModelName} {
		if len(s) > agentNameLen-1 {
			s = s[:agentNameLen-1]
		}
		copy(names[i*agentNameLen:], s)
	}
	return b, nil
}

// AppendBinary appends the published record.
func (c CounterSample) AppendBinary(b []byte) ([]byte, error) {
	b, o := begin(b, KindCounterSample, 8*len(c.Dims)+len(c.Name))
	r := b[o:]
	le.PutUint64(r[8:], c.DispatchID)
	le.PutUint64(r[16:], c.CounterID)
	le.PutUint64(r[24:], math.Float64bits(c.Value))
	le.PutUint32(r[32:], c.AgentNode)
	le.PutUint32(r[36:], uint32(len(c.Dims)))
	le.PutUint32(r[40:], uint32(len(c.Name)))
	for i, d := range c.Dims {
		le.PutUint32(r[48+8*i:], d.DimensionID)
		le.PutUint32(r[52+8*i:], d.Index)
	}
	copy(r[48+8*len(c.Dims):], c.Name)
	return b, nil
}
