package tracing

import (
	"strconv"
	"sync"
)

// Function-name tables per API domain. The HIP and HSA tables are generated
// by the packages that own those APIs and registered from their init
// functions; names a spool carries in string records take precedence (they
// come from the runtime that actually ran).
var (
	functionTablesMu sync.RWMutex
	functionTables   = map[APIDomain][]string{}
)

// RegisterFunctionNames installs the id → name table of an API domain.
func RegisterFunctionNames(d APIDomain, names []string) {
	functionTablesMu.Lock()
	defer functionTablesMu.Unlock()
	functionTables[d] = names
}

// FunctionName returns the registered name of a function id, or false.
func FunctionName(d APIDomain, id uint32) (string, bool) {
	functionTablesMu.RLock()
	defer functionTablesMu.RUnlock()
	t := functionTables[d]
	if int(id) < len(t) && t[id] != "" {
		return t[id], true
	}
	if d == DomainRCCL && int(id) < len(RCCLFunctions) { // this package's own table
		return RCCLFunctions[id].Name, true
	}
	return "", false
}

// UnknownFunctionName is what outputs print for an id nobody named.
func UnknownFunctionName(d APIDomain, id uint32) string {
	return d.String() + "_function_" + strconv.FormatUint(uint64(id), 10)
}
