package counters

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"100*GRBM_GUI_ACTIVE/GRBM_COUNT", "((100*GRBM_GUI_ACTIVE)/GRBM_COUNT)"},
		{"a+b*c-d", "((a+(b*c))-d)"},
		{"(a+b)*c", "((a+b)*c)"},
		{"reduce(X,sum)", "reduce(X,sum)"},
		{"reduce(X, max, [DIMENSION_XCC, SHADER_ENGINE])", "reduce(X,max,[DIMENSION_XCC,SHADER_ENGINE])"},
		{"accumulate(SQ_LEVEL_WAVES, HIGH_RES)", "accumulate(SQ_LEVEL_WAVES,HIGH_RES)"},
		{"select(X,[DIMENSION_XCC=[0,2]])", "select(X,[DIMENSION_XCC=[0 2]])"},
		{"X // a comment\n + 1", "(X+1)"},
		// numbers go through atoi: the integer prefix only
		{"X*0.5", "(X*0)"},
		{"X*1e3", "(X*1)"},
		{"X*.5", "(X*0)"},
		{"X*12.75", "(X*12)"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			n, err := Parse(tt.src)
			require.NoError(t, err)
			require.Equal(t, tt.want, n.String())
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, msg string }{
		{"X|Y", "Mystery character '|'"},
		{"-X", `unexpected "-"`},
		{"X+", "unexpected end of expression"},
		{"reduce(X)", `expected ","`},
		{"accumulate(X, MEDIUM)", "accumulate mode must be NONE, LOW_RES or HIGH_RES"},
		{"(X", `expected ")"`},
		{"X Y", `unexpected "Y"`},
		{"max(X,Y)", `unexpected "("`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := Parse(tt.src)
			require.ErrorContains(t, err, tt.msg)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
		})
	}
}

func TestEveryBuiltinExpressionParses(t *testing.T) {
	cs, err := builtinCounters()
	require.NoError(t, err)
	n := 0
	for _, c := range cs {
		for _, d := range c.Defs {
			if d.Expression == "" {
				continue
			}
			_, err := Parse(d.Expression)
			require.NoError(t, err, "%s: %s", c.Name, d.Expression)
			n++
		}
	}
	require.Equal(t, 323, n, "counter_defs.yaml has 323 derived definitions")
}
