// Package leftovers tests scripts/check-leftovers.sh, the check at the end
// of .ci/run that fails when the suite left something behind in /dev/shm,
// rocprof-go's directories in the temporary directories or the library
// cache (docs/building.md).
package leftovers
