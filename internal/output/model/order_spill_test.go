package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/spill"
)

// TestSpilledNumberingEqualsInMemory: correlation ids numbered through spill
// files get the numbers numberCorrelations gives in memory, for raw ids in
// per-thread blocks (the dense table) and spread far apart (the sorted
// table), with ids carried by several records.
func TestSpilledNumberingEqualsInMemory(t *testing.T) {
	for _, spread := range []uint64{1, 1 << 20} {
		rng := rand.New(rand.NewPCG(7, spread))
		var pairs []corrPair
		for th := range uint64(5) {
			for i := range uint64(2000) {
				raw := (th*2000 + i) * spread
				start := i*1000 + rng.Uint64N(900)
				pairs = append(pairs, corrPair{raw, start})
				if i%3 == 0 {
					pairs = append(pairs, corrPair{raw, start + 5000}) // its dispatch
				}
			}
		}
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		mem := &recordOrder{}
		for _, p := range pairs {
			mem.addPair(p)
		}
		want := numberCorrelations(mem.pairs)

		restore := SetSpillThreshold(100)
		sp := &recordOrder{spill: spillDir(t)}
		for _, p := range pairs {
			sp.addPair(p)
		}
		require.NotNil(t, sp.pairSort)
		require.NoError(t, sp.numberSpilled())
		restore()
		require.NoError(t, sp.err)
		if spread == 1 {
			require.NotNil(t, sp.ids.dense)
		} else {
			require.NotNil(t, sp.ids.table)
		}
		for _, p := range pairs {
			require.Equal(t, want.of(p.raw), sp.ids.of(p.raw), "raw id %d", p.raw)
		}
		unseen := 10_000*spread + 1
		require.Equal(t, want.of(unseen), sp.ids.of(unseen), "an id never seen stays as it is")
		require.Equal(t, unseen, sp.ids.of(unseen))
	}
}

func spillDir(t *testing.T) (d spill.Dir) {
	d.Root = t.TempDir()
	return d
}
