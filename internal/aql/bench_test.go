package aql

import "testing"

// benchPMC builds a PMC packet set (start, stop, read, command buffer) for the
// "mixed" counter set: the target is ≤ 20 µs per build.
func benchPMC(b *testing.B, agent string, events []Event) {
	d, err := ParseAgent(agent)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		arena := Arena{Next: 0x100000000000}
		if _, err := d.BuildPMC(events, arena.Alloc); err != nil {
			b.Fatal(err)
		}
	}
}

var mixed = []Event{{Block: BlockSQ, EventID: 4}, {Block: BlockSQ, EventID: 3}, {Block: BlockGRBM, EventID: 2},
	{Block: 10, EventID: 15}, {Block: BlockTCC, EventID: 17}}

func BenchmarkPMCBuildMI210(b *testing.B) { benchPMC(b, "gfx90a", mixed) }

// MI300X: 8 XCCs, each read section predicated, the largest golden layout.
func BenchmarkPMCBuildMI300X(b *testing.B) {
	ev := append([]Event(nil), mixed...)
	ev[3].EventID = 13
	benchPMC(b, "gfx942", ev)
}

func BenchmarkPMCBuildRX7900(b *testing.B) {
	benchPMC(b, "gfx1100", []Event{{Block: BlockSQ, EventID: 4}, {Block: BlockSQ, EventID: 3}, {Block: BlockGRBM, EventID: 2},
		{Block: 10, EventID: 15}, {Block: BlockGL2C, EventID: 42}})
}
