// Package jobdir says where a job's manifest lives: one file per rank, in a
// hidden directory beside the ranks' outputs, named after the job.
//
// The ranks of a job (2,000 of them, say) write into one output directory
// at the same moment. A single run.json that each rank locked, read and
// rewrote would serialise them all and grow quadratically; instead each
// rank writes its own manifest under a name no other rank uses
// (<dir>/.rocprof-go-job-<uid>/<job>/rank-<rank>.json, created under a temporary
// name and renamed), with no lock, and the readers (summary, compare, the
// job command) take the directory's newest job as one run.
package jobdir
