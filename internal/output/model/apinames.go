package model

// The writers name API calls through tracing.FunctionName, which falls back
// on the tables these packages register when a spool lacks its string
// records: HIP's (hipapi, imported for the arguments too) and HSA's.
import _ "github.com/rocprof-go/rocprof-go/internal/hsaapi"
