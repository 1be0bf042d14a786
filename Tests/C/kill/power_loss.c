/* power_loss -- what a power cut leaves of a store (power_loss.h). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include "power_loss.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

const char *const power_loss_files[POWER_LOSS_FILE_COUNT] = {"", "-wal", "-journal", "-wfjournal"};

static void fail_io(const char *what, const char *path) {
    fprintf(stderr, "power cut: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

/* Copies `from` over `to` (written whole, then renamed into place). */
static void copy_file(const char *from, const char *to) {
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    int in = open(from, O_RDONLY);
    if (in < 0) fail_io("cannot read", from);
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) fail_io("cannot write", tmp);
    char buffer[65536];
    ssize_t n;
    while ((n = read(in, buffer, sizeof buffer)) > 0) {
        if (write(out, buffer, (size_t)n) != n) fail_io("cannot write", tmp);
    }
    if (n < 0) fail_io("cannot read", from);
    close(in);
    close(out);
    if (rename(tmp, to) != 0) fail_io("cannot rename", tmp);
}

static void remove_if_there(const char *path) {
    if (unlink(path) != 0 && errno != ENOENT) fail_io("cannot remove", path);
}

void power_loss_remove_store(const char *store) {
    static const char *const kept[] = {"", ".durable", ".unsynced", ".applying", ".newentry"};
    char path[4300];
    for (size_t i = 0; i < POWER_LOSS_FILE_COUNT; i++) {
        for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++) {
            snprintf(path, sizeof path, "%s%s%s", store, power_loss_files[i], kept[k]);
            remove_if_there(path);
        }
    }
    snprintf(path, sizeof path, "%s-shm", store);
    remove_if_there(path);
}

void power_loss_make_images(const char *store) {
    char path[4200], image[4300], log[4300];
    for (size_t i = 0; i < POWER_LOSS_FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s%s", store, power_loss_files[i]);
        snprintf(image, sizeof image, "%s.durable", path);
        snprintf(log, sizeof log, "%s.unsynced", path);
        remove_if_there(log);
        snprintf(log, sizeof log, "%s.applying", path);
        remove_if_there(log);
        snprintf(log, sizeof log, "%s.newentry", path);
        remove_if_there(log);
        if (access(path, F_OK) == 0) {
            copy_file(path, image);
        } else {
            remove_if_there(image);
        }
    }
}

const char *power_loss_new_entry(const char *store) {
    static char path[4300];
    for (size_t i = 0; i < POWER_LOSS_FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s%s.newentry", store, power_loss_files[i]);
        if (access(path, F_OK) == 0) {
            path[strlen(path) - strlen(".newentry")] = '\0';
            return path;
        }
    }
    return NULL;
}

/* Reads the whole file at `path` (NULL and 0 when it is missing); the caller frees it. */
static unsigned char *read_all(const char *path, size_t *length) {
    *length = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return NULL;
        fail_io("cannot read", path);
    }
    size_t capacity = 1 << 16;
    unsigned char *data = malloc(capacity);
    ssize_t n = 0;
    while (data && (n = read(fd, data + *length, capacity - *length)) > 0) {
        *length += (size_t)n;
        if (*length == capacity) data = realloc(data, capacity *= 2);
    }
    if (!data) fail_io("out of memory reading", path);
    if (n < 0) fail_io("cannot read", path);
    close(fd);
    return data;
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* The whole records of a log (offset and length, 8 bytes each, a kind byte, a write's bytes). */
static size_t records_in(const unsigned char *ops, size_t length) {
    size_t records = 0;
    for (size_t at = 0; at + 17 <= length;) {
        size_t size = 17 + (ops[at + 16] ? 0 : (size_t)le64(ops + at + 8));
        if (at + size > length) break;
        records++;
        at += size;
    }
    return records;
}

size_t power_loss_unsynced(const char *store, size_t index) {
    char log[4300];
    snprintf(log, sizeof log, "%s%s.unsynced", store, power_loss_files[index]);
    size_t length;
    unsigned char *ops = read_all(log, &length);
    size_t records = records_in(ops, length);
    free(ops);
    return records;
}

/* `*fd`, the file at `path` opened for writing (made if missing) on first use. */
static int opened(int *fd, const char *path) {
    if (*fd < 0) *fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (*fd < 0) fail_io("cannot write", path);
    return *fd;
}

/* The sectors of write record `op` (at its offset, `size` bytes) that `torn` keeps, written
 * to the file at `path` (`*fd`, opened if it is not yet). */
static void tear(int *fd, const unsigned char *op, size_t index, power_loss_sector torn, void *context,
                 const char *path) {
    off_t offset = (off_t)le64(op);
    size_t size = (size_t)le64(op + 8);
    off_t end = offset + (off_t)size;
    for (off_t sector = offset - offset % POWER_LOSS_SECTOR; sector < end; sector += POWER_LOSS_SECTOR) {
        off_t from = sector < offset ? offset : sector;
        off_t to = sector + POWER_LOSS_SECTOR < end ? sector + POWER_LOSS_SECTOR : end;
        if (!torn(index, context)) continue;
        size_t length = (size_t)(to - from);
        if (pwrite(opened(fd, path), op + 17 + (from - offset), length, from) != (ssize_t)length)
            fail_io("cannot write", path);
    }
}

void power_loss_cut(const char *store, power_loss_keep keep, power_loss_sector torn, void *context, int again) {
    char path[4200], image[4300], log[4300], marker[4300];
    for (size_t i = 0; i < POWER_LOSS_FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s%s", store, power_loss_files[i]);
        snprintf(image, sizeof image, "%s.durable", path);
        snprintf(log, sizeof log, "%s.unsynced", path);
        snprintf(marker, sizeof marker, "%s.newentry", path);
        size_t length;
        unsigned char *ops = read_all(log, &length);
        size_t records = records_in(ops, length);
        size_t kept = keep(i, records, context);
        if (kept > records) kept = records;
        if (access(image, F_OK) == 0) {
            if (again) {
                copy_file(image, path);
            } else if (rename(image, path) != 0) {
                fail_io("cannot rename", image);
            }
        } else {
            remove_if_there(path);
        }
        int fd = -1;
        size_t at = 0;
        for (size_t r = 0; r < kept; r++) {
            off_t offset = (off_t)le64(ops + at);
            size_t size = (size_t)le64(ops + at + 8);
            if (ops[at + 16]) {
                if (ftruncate(opened(&fd, path), offset) != 0) fail_io("cannot truncate", path);
                at += 17;
            } else {
                if (pwrite(opened(&fd, path), ops + at + 17, size, offset) != (ssize_t)size) fail_io("cannot write", path);
                at += 17 + size;
            }
        }
        /* The write in flight, when the cut tears one: the record after those kept. */
        if (torn && kept < records && !ops[at + 16]) tear(&fd, ops + at, i, torn, context, path);
        if (fd >= 0) close(fd);
        free(ops);
        if (!again) remove_if_there(log);
        /* A sync the process was killed in: the image holds the writes it got to. */
        if (!again) {
            snprintf(log, sizeof log, "%s.applying", path);
            remove_if_there(log);
        }
        /* Created and never in a synced folder: the file is not there after the cut. */
        if (access(marker, F_OK) == 0) {
            remove_if_there(path);
            if (!again) remove_if_there(marker);
        }
    }
    snprintf(path, sizeof path, "%s-shm", store);
    remove_if_there(path);
}
