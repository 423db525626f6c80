// Package atomicfile is where every output file of rocprof-go is created:
// under a temporary name in its destination directory, then renamed onto
// its final name once it is complete. A final name therefore only ever
// holds a whole file, and no output follows a symbolic link.
//
//   - Create makes the temporary file with O_CREAT|O_EXCL|O_NOFOLLOW, named
//     Prefix + the final name + "-" + random digits (dot-prefixed, and ending
//     in digits, so no glob for *.csv, *.db or *.parquet matches it), with
//     mode 0666 less the umask, as os.Create gives, or Private (0600) for
//     files that hold the environment.
//   - Commit closes the file (its error counts) and renames it onto the
//     final name: rename(2) replaces a symlink there, never its target.
//   - Abort removes the temporary file; after Commit it does nothing.
//   - Stage is the same for outputs made of several entries or written by a
//     library that names its own files (OTF2 archives, thread-trace
//     directories): they are written into a private temporary directory and
//     renamed into place entry by entry, an existing directory moved aside.
//
// Files are not fsynced: the rename is atomic against crashes of the
// process (signals, SIGKILL, a full disk), which is what outputs face; a
// machine that loses power also loses the run's spools. A temporary file or
// directory left by a killed process is named IsTemp and never a result;
// delete it.
package atomicfile
