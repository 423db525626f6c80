package options

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocprof-go/rocprof-go/internal/atomicfile"
)

// Job is one run's settings from an input file: rocprofv3 destination names
// mapped to their values as the file wrote them.
type Job map[string]any

// InputFile is a parsed -i file.
type InputFile struct {
	Path string
	// PassPrefix names pass directories: "pmc_" for .txt files, "pass_" for
	// YAML and JSON job files.
	PassPrefix string
	Jobs       []Job
	// Notes and Warnings name the lines of a .txt file that were ignored.
	Notes, Warnings []string
}

// Bounds on an input file: it lists a handful of passes, and each pass runs
// the app once; a file far beyond them is a mistake (or a generated file
// gone wrong) that would otherwise cost gigabytes before the first pass.
const (
	maxInputBytes = 4 << 20
	// maxConfigBytes bounds a --config file, as maxInputBytes an input file.
	maxConfigBytes = 4 << 20
	maxInputPasses = 1000
)

// ReadInput parses a rocprofv3 input file; the extension decides the format.
func ReadInput(path string) (*InputFile, error) {
	in, err := readInput(path)
	if err != nil {
		return nil, err
	}
	if len(in.Jobs) > maxInputPasses {
		return nil, fmt.Errorf("input file %s has %d passes; rocprof-go runs the app once per pass and takes at most %d: split the file", path, len(in.Jobs), maxInputPasses)
	}
	return in, nil
}

func readInput(path string) (*InputFile, error) {
	f, err := atomicfile.OpenInput(path) // a FIFO is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInputBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("input file: %w", err)
	}
	if len(data) > maxInputBytes {
		return nil, fmt.Errorf("input file %s is larger than %d MiB: an input file lists the passes to run (pmc: lines or jobs), not data; check the path", path, maxInputBytes>>20)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".txt":
		return parseTextInput(path, data)
	case ".yaml", ".yml":
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("input file %s is not valid YAML: %w", path, err)
		}
		return jobsFromDocument(path, doc)
	case ".json":
		var doc any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("input file %s is not valid JSON: %v", path, jsonErrorPosition(data, err))
		}
		// Go's decoder, as Python's json module rocprofv3 uses, keeps the
		// last of two equal keys silently; YAML's refuses them (yaml.v3:
		// "mapping key ... already defined"), and so does this.
		if err := jsonDuplicateKey(data); err != nil {
			return nil, fmt.Errorf("input file %s: %w", path, err)
		}
		return jobsFromDocument(path, doc)
	default:
		return nil, fmt.Errorf("input file %s: unsupported extension %q: use .txt (pmc: lines), .yaml, .yml or .json", path, ext)
	}
}

// rocprofV1Keys are the keys of rocprof v1's .txt input files besides pmc:
// (gpu: range: kernel:). Tools written for rocprof v1 still write them, and
// rocprofv3 reads only the pmc: lines.
var rocprofV1Keys = []string{"gpu:", "range:", "kernel:"}

// parseTextInput reads "pmc:" lines; each is one pass. As rocprofv3 does, every
// other line is ignored: a note for rocprof v1's gpu:/range:/kernel: lines, a
// warning for anything else (a mistyped "pmx:" drops a pass).
func parseTextInput(path string, data []byte) (*InputFile, error) {
	in := &InputFile{Path: path, PassPrefix: "pmc_"}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		_, after, ok := strings.Cut(text, "pmc:")
		if !ok {
			trimmed := strings.TrimSpace(text)
			switch {
			case trimmed == "":
			case slices.ContainsFunc(rocprofV1Keys, func(k string) bool { return strings.HasPrefix(trimmed, k) }):
				in.Notes = append(in.Notes, fmt.Sprintf("input file %s line %d: %q ignored: rocprofv3 reads only pmc: lines (gpu:, range: and kernel: are rocprof v1 settings)",
					path, line, trimmed))
			default:
				in.Warnings = append(in.Warnings, fmt.Sprintf("input file %s line %d: %q ignored: not a pmc: line (rocprofv3 ignores it too; write \"pmc: COUNTER ...\", or start a comment with #)",
					path, line, trimmed))
			}
			continue
		}
		counters := SplitCounterList(after)
		if len(counters) == 0 {
			return nil, fmt.Errorf("input file %s line %d: pmc: line lists no counters", path, line)
		}
		words := make([]any, len(counters))
		for i, w := range counters {
			words[i] = w
		}
		in.Jobs = append(in.Jobs, Job{"pmc": words})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("input file %s: %w", path, err)
	}
	if len(in.Jobs) == 0 {
		return nil, fmt.Errorf("input file %s has no pmc: lines (write e.g. \"pmc: SQ_WAVES GRBM_COUNT\")", path)
	}
	return in, nil
}

// SplitCounterList splits a counter list as rocprofv3 does: whitespace and
// commas separate names; duplicates collapse, first occurrence kept.
func SplitCounterList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == ';' || r == '\n' || r == '\r'
	}) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func jobsFromDocument(path string, doc any) (*InputFile, error) {
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input file %s: the top level must be an object with a \"jobs\" list", path)
	}
	rawJobs, ok := top["jobs"]
	if !ok {
		return nil, fmt.Errorf("input file %s: missing the \"jobs\" key (write jobs: [ {pmc: [SQ_WAVES]} ])", path)
	}
	list, ok := rawJobs.([]any)
	if !ok {
		return nil, fmt.Errorf("input file %s: \"jobs\" must be a list of objects", path)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("input file %s: \"jobs\" is empty", path)
	}
	in := &InputFile{Path: path, PassPrefix: "pass_"}
	for i, raw := range list {
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("input file %s: job %d must be an object of option names and values", path, i+1)
		}
		job := Job{}
		spelled := map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			key := strings.ReplaceAll(k, "-", "_")
			if other, ok := spelled[key]; ok {
				return nil, fmt.Errorf("input file %s: job %d sets %q twice (as %q and %q, one option): keep one", path, i+1, key, other, k)
			}
			spelled[key] = k
			job[key] = obj[k]
		}
		in.Jobs = append(in.Jobs, job)
	}
	return in, nil
}

// jsonDuplicateKey finds an object of a (valid) JSON document that holds
// one key twice, and names it with its line.
func jsonDuplicateKey(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type object struct {
		keys      map[string]int // key → line
		expectKey bool
	}
	var stack []*object
	line := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1] != nil {
					stack[len(stack)-1].expectKey = true
				}
				continue
			}
			key := tok.(string)
			at := line(dec.InputOffset())
			if first, ok := top.keys[key]; ok {
				return fmt.Errorf("line %d: key %q is already set at line %d of the same object; a JSON reader keeps only one of them silently (rocprofv3's, the last): remove one", at, key, first)
			}
			top.keys[key] = at
			top.expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{keys: map[string]int{}, expectKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the enclosing object expects its next key.
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].expectKey = true
		}
	}
}

func jsonErrorPosition(data []byte, err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("line %d: %w", line, err)
	}
	return err
}

// jobKeys that are not command-line options but are valid in job files.
var jobOnlyKeys = map[string]bool{"pmc_groups": true, "pmc_group_interval": true, "sub_directory": true}

// applyJob merges one job into a copy of the command-line configuration with
// rocprofv3's rule: a key set in both to different values is an error;
// otherwise the one that is set wins.
func applyJob(cli *Config, job Job, where string) (*Config, error) {
	cfg := cli.clone()
	keys := make([]string, 0, len(job))
	for k := range job {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		val := job[key]
		if jobOnlyKeys[key] {
			if err := applyJobOnlyKey(cfg, key, val, where); err != nil {
				return nil, err
			}
			continue
		}
		spec, ok := SpecByDest(key)
		if !ok {
			return nil, &UsageError{Msg: fmt.Sprintf("%s: unknown key %q (keys are option names with underscores, e.g. kernel_trace, pmc, output_format)", where, key)}
		}
		tmp := &Config{}
		words, err := jobValueWords(spec, val)
		if err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("%s: key %q: %v", where, key, err)}
		}
		for _, w := range words {
			if err := spec.setValue(tmp, w); err != nil {
				return nil, &UsageError{Msg: fmt.Sprintf("%s: key %q: %v", where, key, err)}
			}
		}
		tmp.markSet(spec.Dest)
		if cli.IsSet(key) {
			if a, b := spec.valueString(cli), spec.valueString(tmp); a != b {
				return nil, &UsageError{Msg: fmt.Sprintf("conflicting value for %s: the command line says %q, %s says %q", spec.Flag(), a, where, b)}
			}
			continue
		}
		resetField(spec, cfg)
		for _, w := range words {
			_ = spec.setValue(cfg, w)
		}
		cfg.markSet(spec.Dest)
	}
	return cfg, nil
}

func resetField(spec *Spec, c *Config) {
	if p, ok := spec.Field(c).(*[]string); ok {
		*p = nil
	}
}

// jobValueWords turns a YAML/JSON value into the words the command line would
// have carried.
func jobValueWords(spec *Spec, val any) ([]string, error) {
	scalar := func(v any) (string, error) {
		switch x := v.(type) {
		case string:
			return x, nil
		case bool:
			return strconv.FormatBool(x), nil
		case int:
			return strconv.Itoa(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case uint64: // YAML's integers beyond int64 (a PC-sampling interval up to 2^64-1)
			return strconv.FormatUint(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		case json.Number:
			return x.String(), nil
		case nil:
			return "", fmt.Errorf("has no value")
		}
		return "", fmt.Errorf("expected a single value, got %T", v)
	}
	if spec.Kind == KindStrings {
		switch x := val.(type) {
		case []any:
			var out []string
			for _, e := range x {
				s, err := scalar(e)
				if err != nil {
					return nil, err
				}
				if spec.Dest == "pmc" {
					out = append(out, SplitCounterList(s)...)
				} else {
					out = append(out, s)
				}
			}
			return out, nil
		default:
			s, err := scalar(x)
			if err != nil {
				return nil, err
			}
			if spec.Dest == "pmc" {
				return SplitCounterList(s), nil
			}
			return []string{s}, nil
		}
	}
	s, err := scalar(val)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func applyJobOnlyKey(cfg *Config, key string, val any, where string) error {
	switch key {
	case "pmc_groups":
		groups, ok := val.([]any)
		if !ok {
			return &UsageError{Msg: fmt.Sprintf("%s: pmc_groups must be a list of counter lists", where)}
		}
		cfg.PmcGroups = nil
		for _, g := range groups {
			words, err := jobValueWords(&Spec{Dest: "pmc", Kind: KindStrings}, g)
			if err != nil || len(words) == 0 {
				return &UsageError{Msg: fmt.Sprintf("%s: pmc_groups entries must be non-empty counter lists", where)}
			}
			cfg.PmcGroups = append(cfg.PmcGroups, words)
		}
		cfg.markSet(key)
	case "pmc_group_interval":
		words, err := jobValueWords(&Spec{Kind: KindInt}, val)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("%s: pmc_group_interval: %v", where, err)}
		}
		n, err := parseInt(words[0])
		if err != nil || n < 1 {
			return &UsageError{Msg: fmt.Sprintf("%s: pmc_group_interval must be a positive integer", where)}
		}
		cfg.PmcGroupInterval = n
		cfg.markSet(key)
	case "sub_directory":
		// rocprofv3 sets this itself; accepted and ignored like the launcher does.
	}
	return nil
}
