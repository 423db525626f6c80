package perfetto

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Perfetto trace proto field numbers (protos/perfetto/trace/…).
const (
	pfTracePacket = 1 // Trace.packet

	pfPacketTimestamp     = 8  // TracePacket.timestamp
	pfPacketSequenceID    = 10 // TracePacket.trusted_packet_sequence_id
	pfPacketTrackEvent    = 11 // TracePacket.track_event
	pfPacketInternedData  = 12 // TracePacket.interned_data
	pfPacketSequenceFlags = 13 // TracePacket.sequence_flags

	pfInternedCategories    = 1  // InternedData.event_categories (EventCategory)
	pfInternedNames         = 2  // InternedData.event_names (EventName)
	pfInternedAnnNames      = 3  // InternedData.debug_annotation_names
	pfInternedIID           = 1  // EventCategory/EventName/DebugAnnotationName.iid
	pfInternedName          = 2  // EventCategory/EventName/DebugAnnotationName.name
	pfPacketTrackDescriptor = 60 // TracePacket.track_descriptor

	pfTrackUUID    = 1 // TrackDescriptor.uuid
	pfTrackName    = 2 // TrackDescriptor.name
	pfTrackProcess = 3 // TrackDescriptor.process
	pfTrackThread  = 4 // TrackDescriptor.thread
	pfTrackParent  = 5 // TrackDescriptor.parent_uuid
	pfTrackCounter = 8 // TrackDescriptor.counter

	pfProcessPID  = 1 // ProcessDescriptor.pid
	pfProcessName = 6 // ProcessDescriptor.process_name
	pfThreadPID   = 1 // ThreadDescriptor.pid
	pfThreadTID   = 2 // ThreadDescriptor.tid
	pfThreadName  = 5 // ThreadDescriptor.thread_name

	pfCounterUnitName = 6 // CounterDescriptor.unit_name

	pfEventCategoryIIDs = 3  // TrackEvent.category_iids
	pfEventDebug        = 4  // TrackEvent.debug_annotations
	pfEventNameIID      = 10 // TrackEvent.name_iid
	pfEventType         = 9  // TrackEvent.type
	pfEventTrackUUID    = 11 // TrackEvent.track_uuid
	pfEventCategories   = 22 // TrackEvent.categories
	pfEventName         = 23 // TrackEvent.name
	pfEventCounterValue = 30 // TrackEvent.counter_value
	pfEventDoubleValue  = 44 // TrackEvent.double_counter_value
	pfEventFlowIDs      = 47 // TrackEvent.flow_ids (fixed64)

	pfDebugNameIID = 1  // DebugAnnotation.name_iid
	pfDebugUint    = 3  // DebugAnnotation.uint_value
	pfDebugInt     = 4  // DebugAnnotation.int_value
	pfDebugString  = 6  // DebugAnnotation.string_value
	pfDebugName    = 10 // DebugAnnotation.name

	pfTypeSliceBegin = 1
	pfTypeSliceEnd   = 2
	pfTypeInstant    = 3
	pfTypeCounter    = 4

	pfSeqIncrementalStateCleared = 1
	pfSeqNeedsIncrementalState   = 2
	pfSequenceID                 = 1
)

// pbMsg builds one message by appending fields; nested messages are built
// in a child buffer and appended with their length.
type pbMsg []byte

func (m pbMsg) u(field protowire.Number, v uint64) pbMsg {
	m = protowire.AppendTag(m, field, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m pbMsg) i(field protowire.Number, v int64) pbMsg { return m.u(field, uint64(v)) }

func (m pbMsg) fixed64(field protowire.Number, v uint64) pbMsg {
	m = protowire.AppendTag(m, field, protowire.Fixed64Type)
	return protowire.AppendFixed64(m, v)
}

func (m pbMsg) double(field protowire.Number, v float64) pbMsg {
	m = protowire.AppendTag(m, field, protowire.Fixed64Type)
	return protowire.AppendFixed64(m, mathFloat64bits(v))
}

func (m pbMsg) s(field protowire.Number, v string) pbMsg {
	m = protowire.AppendTag(m, field, protowire.BytesType)
	return protowire.AppendString(m, v)
}

func (m pbMsg) msg(field protowire.Number, sub []byte) pbMsg {
	m = protowire.AppendTag(m, field, protowire.BytesType)
	return protowire.AppendBytes(m, sub)
}

func mathFloat64bits(v float64) uint64 { return math.Float64bits(v) }
