package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// Every output domain the domain table's rows fill is one of this table's
// (its Column: run.json's domain_records, the report's notes), so a record
// of a new domain has a row here to be written under.
func TestDomainTableFillsKnownOutputDomains(t *testing.T) {
	known := map[string]bool{}
	for _, d := range Domains {
		known[d.Column] = true
	}
	for _, s := range domain.Switches {
		for _, o := range s.Outputs {
			require.True(t, known[o], "%s fills %s, which internal/output/model's Domains does not have", s.Option, o)
		}
	}
}
