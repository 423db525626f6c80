package launch

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// passProgress reports multi-pass runs: a bar with elapsed time and an ETA on
// a terminal, one plain line per pass otherwise (logs, CI).
type passProgress struct {
	w     io.Writer
	total int
	start time.Time
	bar   *progressbar.ProgressBar
}

func newPassProgress(w io.Writer, total int) *passProgress {
	p := &passProgress{w: w, total: total, start: time.Now()}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) && total > 1 {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("rocprof-go passes"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
	}
	return p
}

// begin announces pass i (1-based).
func (p *passProgress) begin(i int, label string) {
	if p.total < 2 {
		return
	}
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("rocprof-go pass %d of %d (%s)", i, p.total, label))
		_ = p.bar.RenderBlank()
		fmt.Fprintln(p.w) // the app's output starts on a line of its own
		return
	}
	elapsed := time.Since(p.start).Round(time.Second)
	eta := ""
	if i > 1 {
		per := time.Since(p.start) / time.Duration(i-1)
		eta = fmt.Sprintf(", about %s left", (per * time.Duration(p.total-i+1)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "rocprof-go: pass %d of %d (%s), %s elapsed%s\n", i, p.total, label, elapsed, eta)
}

// done marks a pass finished.
func (p *passProgress) done() {
	if p.bar != nil {
		_ = p.bar.Add(1)
		fmt.Fprintln(p.w)
	}
}
