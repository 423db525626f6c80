// Package rocpd reads ROCpd SQLite databases (schema version 3, as
// rocprofv3 and rocprof-go write them) and merges several into one.
//
// A database holds one or more process images, each a set of tables whose
// names carry the image's uuid suffix; the un-suffixed views stitch them
// together. Readers here query each image's suffixed tables directly: joins
// by primary key stay index lookups, which a join through a UNION ALL view
// does not guarantee, so scans of ten million rows stream at disk speed.
// Small tables (strings, symbols, agents, processes) are loaded into maps;
// record tables are streamed row by row through callbacks.
package rocpdread
