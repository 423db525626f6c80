// Package machinepaths is the guard against paths of a development machine
// in the repository (`make guards`, check-machine-paths): a checkout, mirror
// or home directory of the machine a file was made on (under /work or
// /root, a user's /home, the checkout's own absolute path, $HOME), or a random
// temporary directory (a Go test's /tmp/TestX<digits>, mktemp's
// /tmp/tmp.<random>, go-build, Python's tempfile). Every file git tracks is
// read whole, text and binary alike (a .pyc, a DWARF comp_dir and a spool's
// process header carry the path they were made at). Such a path means
// nothing on another machine and tells about this one; name files relative
// to the repository, or take the path from a variable with a documented
// default. The few look-alikes that are not a machine's (fictional users in
// examples) are allowed by name, each with its reason (allowed, in the
// test).
package machinepaths
