// Package otf2 writes an OTF2 archive (-f otf2) of an output file set:
// <path>.otf2 and <path>/, one location per host thread, queue and copy
// engine, regions by domain. The OTF2 library is loaded at run time
// (library.go names the Debian package to install when it is missing);
// the cgo calls are in cgo.go, and nocgo.go is the stub a build without
// cgo gets, which returns ErrOTF2Unavailable.
package otf2
