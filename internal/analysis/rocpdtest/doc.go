// Package rocpdtest builds small ROCpd (schema version 3) databases with SQL,
// table by table as rocpd-schema.md describes them, so the analysis commands
// can be tested on data they did not write themselves: several processes
// ("ranks") with their own uuids, threads, kernels, copies, API regions and
// markers, with the id and guid conventions of rocprofv3's writer.
package rocpdtest
