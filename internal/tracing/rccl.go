package tracing

// RCCL API records (KindRCCLAPI, DomainRCCL): what the preload library's
// RCCL interposers (internal/hsa/preload/rccl_trace.c) write for each RCCL
// call the application makes.

// RCCLParam is one parameter of an RCCL function: its name and C type as
// rccl.h declares them.
type RCCLParam struct {
	Name string
	Type string
}

// RCCLFunction is one function of rocprofv3's RCCL_API domain.
type RCCLFunction struct {
	Name   string
	Params []RCCLParam
}

// The parameter types, spelled as rccl.h spells them.
const (
	rcclComm     = "ncclComm_t"
	rcclDataType = "ncclDataType_t"
	rcclRedOp    = "ncclRedOp_t"
	rcclStream   = "hipStream_t"
	rcclSize     = "size_t"
	rcclInt      = "int"
	rcclConstBuf = "const void*"
	rcclBuf      = "void*"
	rcclSizes    = "const size_t*"
	rcclConfig   = "ncclConfig_t*"
	rcclUniqueID = "ncclUniqueId"
	rcclAlgo     = "mscclAlgoHandle_t"
)

func params(nt ...string) []RCCLParam {
	p := make([]RCCLParam, len(nt)/2)
	for i := range p {
		p[i] = RCCLParam{Name: nt[2*i], Type: nt[2*i+1]}
	}
	return p
}

// RCCLFunctions is the RCCL_API domain's function table, indexed by
// function id: rocprofiler-sdk's rocprofiler_rccl_api_id_t order and names
// (include/rocprofiler-sdk/rccl/api_id.h), parameters as rccl.h declares
// them. The preload library's table (rccl_trace.c) has the same order;
// TestRCCLFunctionTable compares them.
var RCCLFunctions = []RCCLFunction{
	{"ncclAllGather", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "sendcount", rcclSize,
		"datatype", rcclDataType, "comm", rcclComm, "stream", rcclStream)},
	{"ncclAllReduce", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "count", rcclSize,
		"datatype", rcclDataType, "op", rcclRedOp, "comm", rcclComm, "stream", rcclStream)},
	{"ncclAllToAll", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "count", rcclSize,
		"datatype", rcclDataType, "comm", rcclComm, "stream", rcclStream)},
	{"ncclAllToAllv", params("sendbuff", rcclConstBuf, "sendcounts", rcclSizes, "sdispls", rcclSizes,
		"recvbuff", rcclBuf, "recvcounts", rcclSizes, "rdispls", rcclSizes, "datatype", rcclDataType,
		"comm", rcclComm, "stream", rcclStream)},
	{"ncclBroadcast", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "count", rcclSize,
		"datatype", rcclDataType, "root", rcclInt, "comm", rcclComm, "stream", rcclStream)},
	{"ncclGather", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "sendcount", rcclSize,
		"datatype", rcclDataType, "root", rcclInt, "comm", rcclComm, "stream", rcclStream)},
	{"ncclReduce", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "count", rcclSize,
		"datatype", rcclDataType, "op", rcclRedOp, "root", rcclInt, "comm", rcclComm, "stream", rcclStream)},
	{"ncclReduceScatter", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "recvcount", rcclSize,
		"datatype", rcclDataType, "op", rcclRedOp, "comm", rcclComm, "stream", rcclStream)},
	{"ncclScatter", params("sendbuff", rcclConstBuf, "recvbuff", rcclBuf, "recvcount", rcclSize,
		"datatype", rcclDataType, "root", rcclInt, "comm", rcclComm, "stream", rcclStream)},
	{"ncclSend", params("sendbuff", rcclConstBuf, "count", rcclSize, "datatype", rcclDataType,
		"peer", rcclInt, "comm", rcclComm, "stream", rcclStream)},
	{"ncclRecv", params("recvbuff", rcclBuf, "count", rcclSize, "datatype", rcclDataType,
		"peer", rcclInt, "comm", rcclComm, "stream", rcclStream)},
	{"ncclRedOpCreatePreMulSum", params("op", "ncclRedOp_t*", "scalar", rcclBuf, "datatype", rcclDataType,
		"residence", "ncclScalarResidence_t", "comm", rcclComm)},
	{"ncclRedOpDestroy", params("op", rcclRedOp, "comm", rcclComm)},
	{"ncclGroupStart", nil},
	{"ncclGroupEnd", nil},
	{"ncclGetVersion", params("version", "int*")},
	{"ncclGetUniqueId", params("uniqueId", "ncclUniqueId*")},
	{"ncclCommInitRank", params("comm", "ncclComm_t*", "nranks", rcclInt, "commId", rcclUniqueID,
		"rank", rcclInt)},
	{"ncclCommInitAll", params("comm", "ncclComm_t*", "ndev", rcclInt, "devlist", "const int*")},
	{"ncclCommInitRankConfig", params("comm", "ncclComm_t*", "nranks", rcclInt, "commId", rcclUniqueID,
		"rank", rcclInt, "config", rcclConfig)},
	{"ncclCommFinalize", params("comm", rcclComm)},
	{"ncclCommDestroy", params("comm", rcclComm)},
	{"ncclCommAbort", params("comm", rcclComm)},
	{"ncclCommSplit", params("comm", rcclComm, "color", rcclInt, "key", rcclInt, "newcomm", "ncclComm_t*",
		"config", rcclConfig)},
	{"ncclGetErrorString", params("result", "ncclResult_t")},
	{"ncclGetLastError", params("comm", rcclComm)},
	{"ncclCommGetAsyncError", params("comm", rcclComm, "asyncError", "ncclResult_t*")},
	{"ncclCommCount", params("comm", rcclComm, "count", "int*")},
	{"ncclCommCuDevice", params("comm", rcclComm, "device", "int*")},
	{"ncclCommUserRank", params("comm", rcclComm, "rank", "int*")},
	{"ncclMemAlloc", params("ptr", "void**", "size", rcclSize)},
	{"ncclMemFree", params("ptr", rcclBuf)},
	{"mscclLoadAlgo", params("mscclAlgoFilePath", "const char*", "mscclAlgoHandle", "mscclAlgoHandle_t*",
		"rank", rcclInt)},
	{"mscclRunAlgo", params("sendBuff", rcclConstBuf, "sendCounts", rcclSizes, "sDisPls", rcclSizes,
		"recvBuff", rcclBuf, "recvCounts", rcclSizes, "rDisPls", rcclSizes, "count", rcclSize,
		"dataType", rcclDataType, "root", rcclInt, "peer", rcclInt, "op", rcclRedOp,
		"mscclAlgoHandle", rcclAlgo, "comm", rcclComm, "stream", rcclStream)},
	{"mscclUnloadAlgo", params("mscclAlgoHandle", rcclAlgo)},
	{"ncclCommRegister", params("comm", rcclComm, "buff", rcclBuf, "size", rcclSize, "handle", "void**")},
	{"ncclCommDeregister", params("comm", rcclComm, "handle", rcclBuf)},
}

// RCCLFunctionName returns rocprofv3's name for an RCCL function id.
func RCCLFunctionName(id uint32) string {
	if int(id) < len(RCCLFunctions) {
		return RCCLFunctions[id].Name
	}
	return ""
}

// RCCLCall is one RCCL call: the API record, the tail the RCCL wrapper puts
// first in its argument blob, and the call's parameters.
type RCCLCall struct {
	APICall
	// EndCorrelationID is the first correlation id the calling thread drew
	// after the call returned. Ids increase on each thread, so the HIP calls
	// RCCL made while serving this call (kernel launches, copies, memsets:
	// the ids the kernel and copy records carry) are the HIP records of the
	// same thread with CorrelationID < id < EndCorrelationID (Encloses).
	EndCorrelationID uint64
	// Args holds each parameter's bytes as passed, in declaration order
	// (RCCLFunctions names them); nil when the record carries none.
	Args [][]byte
}

// rcclTailSize is rpg_rccl_tail's size (spool.h).
const rcclTailSize = 8

// Encloses reports whether an API call with this correlation id, made on
// thread tid, was made while serving this RCCL call.
func (c RCCLCall) Encloses(tid uint32, correlationID uint64) bool {
	return tid == c.TID && correlationID > c.CorrelationID && correlationID < c.EndCorrelationID
}

// Name returns rocprofv3's name of the called function.
func (c RCCLCall) Name() string { return RCCLFunctionName(c.Function) }

// Arg returns the named parameter's bytes, or nil.
func (c RCCLCall) Arg(name string) []byte {
	if int(c.Function) >= len(RCCLFunctions) {
		return nil
	}
	for i, p := range RCCLFunctions[c.Function].Params {
		if p.Name == name && i < len(c.Args) {
			return c.Args[i]
		}
	}
	return nil
}

// DecodeRCCLCall splits an RCCL record's argument blob into the tail and the
// parameters. A blob too short for the tail leaves EndCorrelationID 0 (so
// Encloses holds for nothing); parameters that do not fit are left out, as
// the writer leaves out what does not fit its buffer.
func DecodeRCCLCall(a APICall) RCCLCall {
	c := RCCLCall{APICall: a}
	b := a.Args
	if len(b) < rcclTailSize {
		return c
	}
	c.EndCorrelationID = le.Uint64(b)
	b = b[rcclTailSize:]
	for len(b) >= 4 {
		n := int(le.Uint32(b))
		step := (4 + n + 3) &^ 3
		if n == 0 || step > len(b) {
			break // the compact record's zero padding, or a damaged blob
		}
		c.Args = append(c.Args, b[4:4+n:4+n])
		b = b[step:]
	}
	return c
}

// AppendBinary appends the published record: the API record with the tail
// and the parameters as its argument blob (Args is replaced).
func (c RCCLCall) AppendBinary(b []byte) ([]byte, error) {
	blob := le.AppendUint64(nil, c.EndCorrelationID)
	for _, a := range c.Args {
		blob = le.AppendUint32(blob, uint32(len(a)))
		blob = append(blob, a...)
		for len(blob)%4 != 0 {
			blob = append(blob, 0)
		}
	}
	a := c.APICall
	a.Domain = DomainRCCL
	a.Args = blob
	return a.AppendBinary(b)
}
