//go:build !cgo

package output

import "errors"

var errNoCgoOTF2 = errors.New("the OTF2 output needs a cgo build of rocprof-go linked with libotf2 (Debian libotf2-trace-dev): rebuild with CGO_ENABLED=1, or choose another format with -f")

type otf2Archive struct{}

func openOTF2(string, string) (otf2Archive, error) { return otf2Archive{}, errNoCgoOTF2 }
func (otf2Archive) events([]otf2Event) error       { return errNoCgoOTF2 }
func (otf2Archive) definitions(*otf2Trace) error   { return errNoCgoOTF2 }
func (otf2Archive) close() error                   { return nil }
