package output

import "errors"

// WriteOTF2 is not written yet.
func WriteOTF2(path string, in *Input) error { return errors.New("otf2 output: not implemented yet") }
