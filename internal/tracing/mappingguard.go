package tracing

// MappingGuard makes faults in a watched mapping (a spool's, read by
// Open's Reader) harmless: the part of the mapping from the faulting page
// on reads as zeros, and the guard says from where. internal/faultguard
// implements it in C and registers it when linked; tracing itself stays
// pure Go, and without a guard a spool cut short while mapped faults.
type MappingGuard interface {
	// Watch starts watching data and returns its slot, or -1 when it
	// cannot.
	Watch(data []byte) int
	// Unwatch ends slot's watch and returns the offset from which the
	// mapping was replaced by zeros, or -1.
	Unwatch(slot int) int64
	// TornAt is where slot's mapping was cut, or -1, while it is watched.
	TornAt(slot int) int64
}

// mappingGuard is set once, from an init function, before any spool is
// opened.
var mappingGuard MappingGuard

// SetMappingGuard registers the guard every Reader of a spool file uses
// from then on (internal/faultguard's init calls it).
func SetMappingGuard(g MappingGuard) { mappingGuard = g }

func watchMapping(data []byte) int {
	if mappingGuard == nil {
		return -1
	}
	return mappingGuard.Watch(data)
}

func unwatchMapping(slot int) int64 {
	if mappingGuard == nil || slot < 0 {
		return -1
	}
	return mappingGuard.Unwatch(slot)
}

func tornAt(slot int) int64 {
	if mappingGuard == nil || slot < 0 {
		return -1
	}
	return mappingGuard.TornAt(slot)
}
