/*
 * notes.h: the run's report channel (notes.c). A process that cannot record
 * says so there, so that the CLI can count it instead of finding nothing.
 */
#ifndef RPG_NOTES_H
#define RPG_NOTES_H

/* Called once by the recorder's constructor in a process that records
 * (ROCPROF_GO_SPOOL_DIR set): finds the channel (ROCPROF_GO_NOTES_FD, else
 * the notes file of the spool directory by path). */
__attribute__((visibility("hidden"))) void rpg__notes_init(const char *spool_dir);

/* The process could not create (or map) its spool: every record it makes is
 * lost. err is the errno, stage what failed ("create", "map"). Async-signal
 * safe (fstat, write). */
__attribute__((visibility("hidden"))) void rpg__note_spool_failed(int err, const char *stage, const char *dir);

#endif
