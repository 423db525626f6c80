package counters

import (
	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// DeviceFromProperties builds the profiler's device description of a GPU
// from its architecture name and KFD topology properties (num_xcc,
// array_count, simd_arrays_per_engine, simd_count, simd_per_cu). Values the
// properties do not give come from the architecture's reference part.
func DeviceFromProperties(arch string, props map[string]uint64) (*aql.Device, error) {
	ref, err := aql.ParseAgent(arch)
	if err != nil {
		return nil, err
	}
	a := ref.Agent
	if v := props["num_xcc"]; v > 0 {
		a.XCC = int(v)
	}
	if sa := props["simd_arrays_per_engine"]; sa > 0 {
		a.SAPerSE = int(sa)
		if n := props["array_count"]; n >= sa {
			a.SE = int(n / sa)
		}
	}
	if spc := props["simd_per_cu"]; spc > 0 && props["simd_count"] > 0 {
		a.CU = int(props["simd_count"] / spc)
	}
	return aql.NewDevice(a)
}

// PropertiesFromKFD converts KFD topology values for WithProperties.
func PropertiesFromKFD(props map[string]uint64) Properties {
	p := make(Properties, len(props))
	for k, v := range props {
		p[k] = float64(v)
	}
	return p
}

// ForAgent loads the counter database of an agent description such as
// "gfx90a" or "gfx942:xcc=8,se=32,cu=304,sa=1".
func ForAgent(spec string, opts ...Option) (*DB, error) {
	dev, err := aql.ParseAgent(spec)
	if err != nil {
		return nil, err
	}
	return Load(dev, opts...)
}
