package outputtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// OTF2Counts reads an archive with otf2-print (the OTF2 library's own
// tool) and counts region entries per category, from the location names.
func OTF2Counts(t *testing.T, anchor string) (counts map[string]uint64, leaves uint64) {
	t.Helper()
	defs, err := exec.Command("otf2-print", "-G", anchor).CombinedOutput()
	require.NoError(t, err, "%s", defs)
	category := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(defs))
	for sc.Scan() {
		if m := otf2LocationDef.FindStringSubmatch(sc.Text()); m != nil {
			category[m[1]] = strings.Fields(m[2])[0]
		}
	}
	require.NotEmpty(t, category)
	cmd := exec.Command("otf2-print", anchor)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	counts = map[string]uint64{}
	sc = bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if m := otf2Enter.FindStringSubmatch(line); m != nil {
			counts[category[m[1]]]++
		} else if strings.HasPrefix(line, "LEAVE") {
			leaves++
		}
	}
	require.NoError(t, cmd.Wait())
	return counts, leaves
}

var (
	otf2LocationDef = regexp.MustCompile(`^LOCATION\s+(\d+)\s+Name: "([^"]*)"`)
	otf2Enter       = regexp.MustCompile(`^ENTER\s+(\d+)\s+`)
)
