//go:build !cgo

package pcsprobe

import "errors"

// Probe cannot load a runtime without cgo.
func Probe(string) ([]GPU, error) {
	return nil, errors.New("this rocprof-go was built without cgo: it cannot load the runtime")
}
