// Package domain is the table of the tracing domains: the one place a
// domain is spelled. Each row is one domain the app's processes can be
// asked to collect: the option that asks for it, the ROCPROF_* variable
// that carries it to the injected code, its bit in the recorder's
// rpg_domains mask, the injected library that collects it, the output
// domains its records fill, the aggregate options that switch it on, and
// what an empty domain most often means.
//
// Everything else reads the table: the options (each domain switch's
// flag, help line and field, each domain option's variable and who reads
// it, the aggregates' expansion), --echo, the launcher's rule for loading
// the shim, the end-of-run report, the lost-domain check; internal/cmd/gendomain
// generates from it the C header the injected code includes
// (internal/hsa/preload/rpg_domains_gen.h) and the table in the users'
// reference, docs/options.md. The test TestNoSourceSpellsADomain (make guards) fails
// on a domain's variable or option spelled anywhere else: code that
// treats one domain apart names its row by ID (domain.Kernel). It imports
// nothing: it is the bottom layer, below the options.
package domain

//go:generate go run ../cmd/gendomain -c ../hsa/preload/rpg_domains_gen.h -md ../../docs/options.md
