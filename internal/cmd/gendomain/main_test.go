package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
)

// fake is a new domain, one row: the C header gives the injected code its
// bit and the variable that sets it, and the users' table lists it.
var fake = domain.Switch{Option: "fake_trace", Env: "ROCPROF_FAKE_API_TRACE", ReadBy: domain.Preload, Bit: 13, C: "FAKE",
	Status: domain.NoBit, CollectedBy: domain.Preload, Outputs: []string{"FAKE_API"}, Aggregates: []string{"sys_trace"},
	Report: "--fake-trace", Empty: ": the app made no fake call", Help: "fake API"}

func TestANewRowReachesTheHeaderAndTheDocs(t *testing.T) {
	rows := append(append([]domain.Switch{}, domain.Switches...), fake)
	require.NoError(t, check(rows))
	h := string(cHeader(rows))
	require.Contains(t, h, "    RPG_DOMAIN_FAKE = 1u << 13 /* ROCPROF_FAKE_API_TRACE */\n};")
	require.Contains(t, h, "    {RPG_ENV_FAKE_API_TRACE, RPG_DOMAIN_FAKE},\n")
	require.Contains(t, string(markdown(rows)), "| `--fake-trace` | `ROCPROF_FAKE_API_TRACE` | 13 (`RPG_DOMAIN_FAKE`) | preload | `FAKE_API` | `--sys-trace` | the app made no fake call |\n")

	clash := fake
	clash.Bit = 7
	require.ErrorContains(t, check(append(rows[:len(rows)-1:len(rows)-1], clash)), "kernel_trace and fake_trace share bit 7")
}

// The committed header and table are what the table generates (make guards
// regenerates them too).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("..", "..", "hsa", "preload", "rpg_domains_gen.h"))
	require.NoError(t, err)
	require.Equal(t, string(cHeader(domain.Switches)), string(h), "go generate ./internal/domain")
	page, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "options.md"))
	require.NoError(t, err)
	want, err := replaceRegion(page, markdown(domain.Switches))
	require.NoError(t, err)
	require.Equal(t, string(want), string(page), "go generate ./internal/domain")
}
