package analysis_test

import "time"

// sleepBriefly paces the heap sampler so it costs little CPU.
func sleepBriefly() { time.Sleep(20 * time.Millisecond) }
