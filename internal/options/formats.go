package options

import (
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/output/format"
)

// outputFormats are -f/--output-format's choices: the one list of formats
// (internal/output/format), which the writers' registry follows too.
var outputFormats = format.Names()

var outputFormatHelp = "output formats, one or more of " + strings.Join(outputFormats, " ") + " (default rocpd)"
