# Stand-in for the DMI sysfs (/sys/class/dmi/id), sourced by /bin/sh in a
# private mount namespace before rocprofiler-compute's `profile` runs.
# rocprofiler-compute reads /sys/class/dmi/id/bios_vendor and bios_version
# for its system info; every x86 GPU host has them, but virtual machines
# without SMBIOS (this project's) do not, and sysfs takes no new files. So,
# only where they are missing: a tmpfs over /sys/class holding every
# original class again (bind mounts) and a dmi/id with the two files.
# ROCPROF_COMPUTE_TEST_SCRATCH is a directory for the original's mount point.
# Used by test/rocprofcompute (docs/rocprofiler-compute.md).
if [ ! -e /sys/class/dmi/id/bios_vendor ]; then
  orig="${ROCPROF_COMPUTE_TEST_SCRATCH:?}/sys-class"
  mkdir -p "$orig" &&
    mount --bind /sys/class "$orig" &&
    mount -t tmpfs -o mode=0755 rocprof-go-dmi /sys/class || exit 125
  for e in "$orig"/*; do
    n=${e##*/}
    mkdir "/sys/class/$n" && mount --bind "$e" "/sys/class/$n" || exit 125
  done
  mkdir -p /sys/class/dmi/id &&
    echo "rocprof-go virtual GPU" > /sys/class/dmi/id/bios_vendor &&
    echo "0.0" > /sys/class/dmi/id/bios_version || exit 125
fi
