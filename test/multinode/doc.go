// Package multinode tests a job whose ranks ran on different nodes, made
// on one machine: each "node" is a UTS namespace (its own hostname) and a
// time namespace (its own boot and monotonic clocks, as another machine's
// are), and the ranks' data is merged and converted as a job's would be.
package multinode
