//go:build !cgo

package otf2

import "errors"

var errNoCgoOTF2 = errors.New("the OTF2 output calls the OTF2 library from C, which a CGO_ENABLED=0 build of rocprof-go cannot: rebuild with CGO_ENABLED=1 (make build), or choose another format with -f")

type otf2Archive struct{}

func loadOTF2() error                              { return errNoCgoOTF2 }
func openOTF2(string, string) (otf2Archive, error) { return otf2Archive{}, errNoCgoOTF2 }
func (otf2Archive) events([]otf2Event) error       { return errNoCgoOTF2 }
func (otf2Archive) definitions(*otf2Trace) error   { return errNoCgoOTF2 }
func (otf2Archive) close() error                   { return nil }
