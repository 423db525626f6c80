package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/pcsprobe"
)

func init() { registerSubcommand(newPCSProbeCmd) }

// pcsProbeCommand is the hidden subcommand that asks a runtime for its
// PC-sampling configurations (internal/pcsprobe) and prints them as JSON.
const pcsProbeCommand = "__pcs-probe"

func newPCSProbeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    pcsProbeCommand + " RUNTIME",
		Short:  "print the PC-sampling configurations the ROCm runtime RUNTIME reports (JSON)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			gpus, err := pcsprobe.Probe(args[0])
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(gpus)
		},
	}
}

// pcsProbeTimeout bounds the probe: a runtime that hangs in hsa_init must
// not hang the listing (it falls back to the table).
const pcsProbeTimeout = 30 * time.Second

// probePCSampling asks the runtime rocr for its GPUs' PC-sampling
// configurations in a probe process of its own (HSA is initialised there,
// never in the CLI), started with the environment the app would get: the
// virtual GPU preloaded for a virtual architecture, no profiler library.
func probePCSampling(rocr, virtualArch string) ([]pcsprobe.GPU, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "LD_PRELOAD=") && !strings.HasPrefix(e, "HSA_TOOLS_LIB=") {
			env = append(env, e)
		}
	}
	if virtualArch != "" {
		libs, err := launch.EmbeddedLibraries()
		if err != nil {
			return nil, err
		}
		vgpu, err := libs.Path(launch.VGPULib)
		if err != nil {
			return nil, err
		}
		env = append(env, "LD_PRELOAD="+vgpu, launch.VGPUArchEnv+"="+virtualArch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pcsProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, pcsProbeCommand, rocr)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg != "" {
			return nil, fmt.Errorf("%w: %s", err, strings.TrimPrefix(msg, "rocprof-go: error: "))
		}
		return nil, err
	}
	var gpus []pcsprobe.GPU
	if err := json.Unmarshal(out, &gpus); err != nil {
		return nil, fmt.Errorf("the probe's answer: %w", err)
	}
	return gpus, nil
}
