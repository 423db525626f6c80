package placeholder

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Process is what placeholders may refer to about one profiled process.
type Process struct {
	Pid, Ppid, Pgid, Sid int
	// PSize is the number of children of the parent process (%psize%).
	PSize    int
	Hostname string
	Cwd      string
	Argv     []string
	// LookupEnv reads the process's environment (%env{NAME}%, %rank% ...).
	LookupEnv func(string) (string, bool)
	// Launch is when profiling started (%launch_date%, %launch_time%).
	Launch time.Time
}

// Current describes the calling process, for keys resolved before launch.
func Current() Process {
	host, err := os.Hostname()
	if err != nil {
		host = "UNKNOWN_HOSTNAME"
	}
	cwd, _ := os.Getwd()
	sid, _ := getsid()
	pgid, _ := getpgid()
	return Process{
		Pid: os.Getpid(), Ppid: os.Getppid(), Pgid: pgid, Sid: sid, PSize: 1,
		Hostname: host, Cwd: cwd, Argv: os.Args, LookupEnv: os.LookupEnv, Launch: time.Now(),
	}
}

var (
	envForms = regexp.MustCompile(`%env\{([A-Za-z0-9_]+)\}%|\$env\{([A-Za-z0-9_]+)\}|\$ENV\{([A-Za-z0-9_]+)\}|%q\{([A-Za-z0-9_]+)\}`)
	argN     = regexp.MustCompile(`[%{]arg([0-9]+)[%}]`)
)

// perProcessKeys are the keys whose value differs between the processes of
// one run; a prefix that uses any of them gives each process its own files.
var perProcessKeys = []string{"pid", "ppid", "pgid", "psid", "psize", "p", "argv", "argt", "args", "tag", "nid"}

// IsPerProcess reports whether a template refers to a per-process key.
func IsPerProcess(template string) bool {
	for _, k := range perProcessKeys {
		if strings.Contains(template, "%"+k+"%") || strings.Contains(template, "{"+k+"}") ||
			(len(k) == 1 && strings.Contains(template, "%"+k)) {
			return true
		}
	}
	return argN.MatchString(template)
}

// rankKeys are the keys an MPI or SLURM launcher sets per rank: the same
// for every process of a run whose rocprof-go runs inside the rank (its
// environment names the rank), per process when the ranks are the app's
// children.
var rankKeys = []string{"rank", "size", "nid", "r", "s"}

// RunPart returns the part of template that every process of one run
// resolves alike, expanded for p (the process that starts the run): the
// template up to its first placeholder whose value may differ between the
// run's processes (pid, arguments, ...; the rank when p's environment names
// none), and whether the template was cut there. rocprof-go puts a run's
// own files (run.json) under it.
func RunPart(template string, p Process) (part string, cut bool) {
	if p.LookupEnv == nil {
		p.LookupEnv = os.LookupEnv
	}
	keys := perProcessKeys
	if LauncherOf(p.LookupEnv).Name == "" {
		keys = append(append([]string{}, perProcessKeys...), rankKeys...)
	}
	end := len(template)
	for _, k := range keys {
		forms := []string{"%" + k + "%", "{" + k + "}"}
		if len(k) == 1 {
			forms = []string{"%" + k} // the one-letter forms: %p, %r, %s
		}
		for _, f := range forms {
			if i := strings.Index(template, f); i >= 0 && i < end {
				end = i
			}
		}
	}
	if loc := argN.FindStringIndex(template); loc != nil && loc[0] < end {
		end = loc[0]
	}
	return Expand(template[:end], p), end < len(template)
}

// Expand resolves every placeholder in template for process p, in one
// pass: a value put in (an argument of the app, a variable, the working
// directory, the hostname) is never expanded again. An app run as
// `app %cwd%` keeps its own text in -o %args%; expanding it would put
// rocprof-go's working directory, slashes and all, into a file name.
func Expand(template string, p Process) string {
	if p.LookupEnv == nil {
		p.LookupEnv = os.LookupEnv
	}
	v := values(p)
	var b strings.Builder
	s := template
	for i := 0; i < len(s); {
		if val, n := v.at(s[i:]); n > 0 {
			b.WriteString(val)
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// expansion is one process's placeholder values.
type expansion struct {
	p    Process
	keys []struct{ key, val string }
	one  map[byte]string // %h %p %j %r %s
}

var (
	envFormAt = regexp.MustCompile(`^(?:` + envForms.String() + `)`)
	argNAt    = regexp.MustCompile(`^[%{]arg([0-9]+)[%}]`)
	dashesAt  = regexp.MustCompile(`^[-_]*`)
)

func values(p Process) *expansion {
	args := appArgs(p.Argv)
	l := LauncherOf(p.LookupEnv)
	rank, size := l.Rank, l.Size
	if l.Name == "" {
		rank, size = "0", "1"
	}
	job := envOr(p.LookupEnv, "SLURM_JOB_ID", "0")
	nid := strconv.Itoa(p.Pid)
	if l.Name != "" {
		nid = rank
	}
	launch := p.Launch
	if launch.IsZero() {
		launch = time.Now()
	}
	dateFmt := envOr(p.LookupEnv, "ROCPROF_DATE_FORMAT", "%F")
	timeFmt := envOr(p.LookupEnv, "ROCPROF_TIME_FORMAT", "%F_%H.%M")
	tag := ""
	if len(p.Argv) > 0 {
		tag = filepath.Base(p.Argv[0])
	}
	// Values the process or its environment chose become one path
	// component each: a hostname of "../../.." (anyone may set one in a
	// UTS namespace) or a job id with a slash must not lead outside -d.
	host := cleanArg(p.Hostname)
	job, rank, size, nid, tag = cleanArg(job), cleanArg(rank), cleanArg(size), cleanArg(nid), cleanArg(tag)
	return &expansion{p: p, keys: []struct{ key, val string }{
		{"hostname", host},
		{"pid", strconv.Itoa(p.Pid)},
		{"ppid", strconv.Itoa(p.Ppid)},
		{"pgid", strconv.Itoa(p.Pgid)},
		{"psid", strconv.Itoa(p.Sid)},
		{"psize", strconv.Itoa(p.PSize)},
		{"job", job},
		{"rank", rank},
		{"size", size},
		{"nid", nid},
		{"cwd", p.Cwd},
		{"launch_date", strftime(dateFmt, launch)},
		{"launch_time", strftime(timeFmt, launch)},
		{"argv", joinArgs(append([]string{p.argv0()}, args...))},
		{"argt", joinArgs(append([]string{tag}, args...))},
		{"args", joinArgs(args)},
		{"tag", tag},
	}, one: map[byte]string{'h': host, 'p': strconv.Itoa(p.Pid), 'j': job, 'r': rank, 's': size}}
}

// at returns the value of the placeholder s starts with and its length,
// or 0 when s starts with none.
func (e *expansion) at(s string) (string, int) {
	switch s[0] {
	case '%', '$', '{':
	default:
		return "", 0
	}
	if m := envFormAt.FindStringSubmatch(s); m != nil {
		for _, name := range m[1:] {
			if name != "" {
				v, _ := e.p.LookupEnv(name)
				return sanitizeEnv(v), len(m[0])
			}
		}
	}
	if s[0] == '$' {
		return "", 0
	}
	if m := argNAt.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < len(e.p.Argv) {
			return cleanArg(e.p.Argv[n]), len(m[0])
		}
		// An argument the app was not given: gone, with the separators
		// after it.
		return "", len(m[0]) + len(dashesAt.FindString(s[len(m[0]):]))
	}
	end := byte('%')
	if s[0] == '{' {
		end = '}'
	}
	for _, k := range e.keys {
		if len(s) >= len(k.key)+2 && s[1:1+len(k.key)] == k.key && s[1+len(k.key)] == end {
			return k.val, len(k.key) + 2
		}
	}
	if s[0] == '%' && len(s) > 1 {
		if v, ok := e.one[s[1]]; ok {
			return v, 2
		}
	}
	return "", 0
}

func (p Process) argv0() string {
	if len(p.Argv) == 0 {
		return ""
	}
	return p.Argv[0]
}

// appArgs drops a leading "--" argument, as rocprofv3 does.
func appArgs(argv []string) []string {
	if len(argv) < 2 {
		return nil
	}
	args := argv[1:]
	if args[0] == "--" {
		args = args[1:]
	}
	return args
}

func cleanArg(a string) string {
	a = strings.ReplaceAll(a, "/", "_")
	return strings.TrimLeft(a, "._")
}

func joinArgs(args []string) string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if c := cleanArg(a); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, "_")
}

func sanitizeEnv(v string) string {
	v = strings.TrimLeft(v, " \t/")
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '/' {
			return '_'
		}
		return r
	}, v)
}

func envOr(lookup func(string) (string, bool), name, def string) string {
	if v, ok := lookup(name); ok && v != "" {
		return v
	}
	return def
}

// strftime supports the conversions rocprofv3's default date and time formats
// use, plus the common ones users put in ROCPROF_*_FORMAT.
func strftime(f string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'Y':
			b.WriteString(t.Format("2006"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'd':
			b.WriteString(t.Format("02"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'S':
			b.WriteString(t.Format("05"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}
