package pipeline

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/placeholder"
)

// writeConfigFile writes <dir>/<prefix>_config.json for --output-config: the
// pass's configuration, build information and the app's full environment.
// It is the only output that carries the environment, and only on request.
func writeConfigFile(pass passResult, app []string) (model.File, error) {
	c := pass.Config
	prefix := c.OutputFile
	if prefix == "" {
		prefix = output.DefaultPrefixTemplate
	}
	proc := placeholder.Current()
	proc.Argv = app
	proc.Ppid = proc.Pid
	if pass.Process != nil {
		proc.Pid = pass.Process.Pid
	}
	base := filepath.Join(placeholder.Expand(pass.Dir, proc), placeholder.Expand(prefix, proc))
	path := base + "_config.json"

	config := map[string]string{}
	for _, l := range c.Describe() {
		k, v, _ := strings.Cut(l, " = ")
		config[k] = v
	}
	env := map[string]string{}
	if pass.Env != nil {
		for _, kv := range pass.Env.Full {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	var initNs, finiNs int64
	if pass.Process != nil {
		initNs = pass.Process.Start.UnixNano()
		finiNs = pass.Process.Start.Add(pass.Process.Duration).UnixNano()
	}
	doc := map[string]any{
		"rocprofiler-sdk-tool": []any{map[string]any{
			"metadata": map[string]any{
				"pid":       proc.Pid,
				"init_time": initNs,
				"fini_time": finiNs,
				"config":    config,
				"command":   app,
				"build_spec": map[string]any{
					"version":          Version,
					"compiler_id":      "gc",
					"compiler_version": runtime.Version(),
					"library_arch":     runtime.GOARCH + "-linux-gnu",
					"system_name":      "Linux",
				},
				"environment": env,
			},
		}},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return model.File{}, err
	}
	if err := atomicfile.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return model.File{}, err
	}
	// It holds the environment: 0600, through a temporary file.
	if err := atomicfile.WriteFile(path, append(data, '\n'), atomicfile.Private); err != nil {
		return model.File{}, fmt.Errorf("config output: %w", err)
	}
	return model.File{Path: path, Format: "json", Domain: "config", Records: 1}, nil
}

// writeConfigFiles adds config.json to every pass that asked for it.
func writeConfigFiles(res *runResult, plan *options.Plan) error {
	for i := range res.Passes {
		p := &res.Passes[i]
		if !p.Config.OutputConfig.On() {
			continue
		}
		f, err := writeConfigFile(*p, plan.App)
		if err != nil {
			return err
		}
		p.Files = append(p.Files, f)
	}
	return nil
}
