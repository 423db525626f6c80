// Package sqlitefd lets SQLite open a file through a directory descriptor.
//
// Outputs are written inside directories held open after they were
// verified (internal/securedir); a library that only takes paths is given
// one through the descriptor, /proc/self/fd/N/name, which the kernel
// resolves to the open directory whatever became of its path since. SQLite
// would undo that: before opening a file it resolves every symbolic link
// on the path itself (lstat and readlink, component by component), turning
// /proc/self/fd/N back into the directory's path as text, and with
// SQLITE_OPEN_NOFOLLOW it refuses the path outright. Install makes SQLite
// see /proc/self and what lies below it as what the kernel resolves them
// to (stat instead of lstat there, through SQLite's documented
// xSetSystemCall hook), so the path it opens is the descriptor's. Every
// other path is resolved as before.
package sqlitefd
