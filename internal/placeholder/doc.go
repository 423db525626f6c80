// Package placeholder expands rocprofv3's output path placeholders (%hostname%,
// %pid%, %rank%, %env{NAME}%, %argt% ...) for one profiled process.
package placeholder
