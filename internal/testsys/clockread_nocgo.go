//go:build !cgo

package testsys

const clockReadsMeasured = false

// MeasureClockReads needs cgo (the reads are timed in C, as the recorder
// makes them): without it both costs are 0, "not measured".
func MeasureClockReads() (rdtscNs, clockGettimeNs float64) { return 0, 0 }
