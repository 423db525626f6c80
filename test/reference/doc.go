// Package reference checks that where rocprof-go's output must equal
// rocprofv3's (columns, kernel names, dispatch and correlation ids,
// register counts, counter values, copy sizes) it does, against values
// the test derives on its own: never from rocprof-go's code or tables
// (issue 36). It runs the built CLI on the virtual GPU (gfx90a, and gfx942
// where the runtime knows it) on every runtime of the ROCm matrix, the
// host's 5.2 and the roots, with the sample app multistream; and it
// derives the expected values from
//
//   - the shared rocprofv3 output specification (../shared/docs/output-formats.md,
//     parsed here) for the CSV headers;
//   - the code objects the runtime loaded: the app's own, unbundled from its
//     .hip_fatbin, and HIP's blit kernels, which HIP compiles at run time
//     with comgr (kept with AMD_COMGR_SAVE_TEMPS), read with debug/elf;
//     rocprofiler-sdk's formulas for the register columns; names demangled
//     by llvm-cxxfilt;
//   - the app's own launch parameters (grid, workgroup, bytes, call order).
//
// No session has run AMD's own rocprofv3 (these machines have no AMD GPU;
// git log records no such run): the rules rest on rocprofiler-sdk's source
// (the rocm-systems mirror: code_object.cpp for the registers, the output
// writers for columns and ids) and its documentation's sample CSVs, as
// docs/outputs.md does. docs/performance.md ("rocprofv3 reference") lists
// what is checked and where each fact comes from.
package reference
