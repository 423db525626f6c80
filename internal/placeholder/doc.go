// Package placeholder expands rocprofv3's output path placeholders (%hostname%,
// %pid%, %rank%, %env{NAME}%, %argt% ...) for one profiled process, and tells
// the part of a template every process of a run resolves alike (where the
// run's own files go).
package placeholder
