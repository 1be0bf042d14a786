/*
 * power_loss -- what a power cut leaves of a store whose process ran under powercut_shim.so.
 *
 * The shim keeps beside each store file F its image `F.durable` (F as it stood at its last
 * sync), the writes not yet synced in `F.unsynced`, and `F.newentry` while F's folder was
 * never synced since F was made (powercut_shim.c describes the formats). These functions turn
 * those into the files a power cut leaves, for kill-supervisor (random cuts) and
 * chosen-power-cuts (cuts at moments a test picks). A failure to read or write a file prints
 * the path and exits the program with status 1.
 */
#ifndef POWER_LOSS_H
#define POWER_LOSS_H

#include <stddef.h>

/* The store's files a power cut concerns, by suffix: the store, SQLite's "-wal" and
 * "-journal", the engine's "-wfjournal" ("-shm" is not among them: SQLite rebuilds it). */
extern const char *const power_loss_files[];
#define POWER_LOSS_FILE_COUNT 4u
/* The index of "-wal" in power_loss_files. */
#define POWER_LOSS_WAL 1u
/* The index of "-wfjournal" in power_loss_files. */
#define POWER_LOSS_JOURNAL 3u

/* Removes the store's files, "-shm" and what the shim keeps beside each. */
void power_loss_remove_store(const char *store);

/* Before a process is launched under the shim: what each store file holds now is durable (each
 * file copied to its image; images of missing files, unsynced logs and markers removed). */
void power_loss_make_images(const char *store);

/* The store file (a static buffer) the process made and whose folder it never synced since
 * (the shim's marker), or NULL: a power cut would take that file. */
const char *power_loss_new_entry(const char *store);

/* How many whole writes and truncations file `index` of the store (power_loss_files) has in
 * its unsynced log: 0 when it has none, or no log. */
size_t power_loss_unsynced(const char *store, size_t index);

/* How many of the `unsynced` writes of file `index` a cut keeps (at most `unsynced`). */
typedef size_t (*power_loss_keep)(size_t index, size_t unsynced, void *context);

/* Whether one sector (POWER_LOSS_SECTOR bytes, aligned in the file) of the write in flight
 * when the power went, the one after those kept, reached the disk of file `index`. */
typedef int (*power_loss_sector)(size_t index, void *context);
#define POWER_LOSS_SECTOR 512u

/* After the process under the shim ended (killed, or exited without closing): the power cut.
 * Each store file becomes its image plus the prefix of its unsynced writes `keep` chooses; with
 * `torn` (NULL: none), the write after that prefix is torn: the sectors `torn` chooses of it
 * are kept too. A file with neither image nor kept writes is removed, and so is a file still
 * marked new; "-shm" is removed. With `again` 0 the images, logs and markers are used up (the
 * next launch needs power_loss_make_images); with 1 they are left as they are, so that the same
 * moment can be cut again with another choice (the files in between may be opened and changed
 * at will). `context` goes to `keep` and `torn`. */
void power_loss_cut(const char *store, power_loss_keep keep, power_loss_sector torn, void *context, int again);

#endif
