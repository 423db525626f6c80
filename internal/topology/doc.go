// Package topology finds the GPU agents a run will use before the app starts:
// from the KFD topology in sysfs on a machine with AMD GPUs, or from the
// virtual GPU's configuration. The CLI uses it to validate counters against
// the right architecture and to list available counters.
package topology
