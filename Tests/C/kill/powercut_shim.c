/*
 * powercut_shim.so -- an LD_PRELOAD library that models what a power cut keeps of a store.
 *
 * A killed process loses nothing the kernel was given: its writes are in the page cache and
 * reach the disk later. A power cut loses every write that was not synced. This library
 * keeps, beside each file of one store, the file as a power cut would leave it: `F.durable`,
 * which receives F's writes only when F is synced (fsync or fdatasync on any descriptor of
 * it). Killing the process and then replacing each file by its `.durable` image (what
 * kill-supervisor --power-cut does) is a power cut at that moment. The writes not yet synced
 * are also appended, in order, to `F.unsynced` (records: offset and length as 8 bytes each,
 * little-endian, a kind byte, 0 write or 1 truncation, then a write's bytes); the supervisor
 * may keep a prefix of them, as a disk may have written some of them before the power went.
 *
 * Environment: POWERCUT_STORE, the store's path as the process opens it (absolute). The files
 * followed are that path and the path followed by "-" and a suffix (SQLite's "-wal" and
 * "-journal", the engine's "-wfjournal"), except "-shm" (SQLite's shared memory index, which
 * SQLite rebuilds from the WAL when it is missing). Without POWERCUT_STORE the library changes
 * nothing.
 *
 * The model, and what it leaves out:
 *  - Writes not yet synced are kept in memory, in order, per file (not per descriptor: a sync
 *    flushes the file's writes whichever descriptor made them), and applied to the image, in
 *    order, by the next sync. A process killed during a sync leaves the image with a prefix
 *    of those writes, one of the states a real power cut may leave.
 *  - A file that has no image when it is opened, and was not there before, is new: it exists
 *    after a power cut only once synced. The image of a file that existed before the process
 *    was started is made by whoever starts it (kill-supervisor copies each file to its image).
 *  - Directory entries: a file this process creates exists after a power cut only once the
 *    store's directory has been synced (fsync on a descriptor of the directory); until then
 *    `F.newentry` marks it, and the supervisor removes the file at a cut. Deleting a file counts
 *    at once. Renaming a followed file is not modelled: the library aborts the process, so that
 *    a test cannot silently pass under a wrong model.
 *  - A process killed without a cut leaves its writes not yet synced in the kernel: a process
 *    started on the files without new images (power_loss_make_images) takes the logs over, so
 *    those writes stay unsynced (a cut may still take them) until it syncs the file, which puts
 *    them on disk before its own (a kill, then a power cut later: kill-supervisor --cuts-later,
 *    chosen_power_cuts.c). A sync renames the log `F.applying` while it applies it, so that the
 *    next process finishes applying the writes of a sync a kill interrupted (the real sync had
 *    returned); without it the model lost them, and a later cut left a hole in SQLite's log.
 *    Every write is logged just after the real one returns (waiting for the lock while another
 *    thread's sync applies): a kill in that window leaves bytes in the file that the model
 *    lacks, a hole at the next launch's sync (never seen to matter; holding the lock across the
 *    real write would close it).
 *  - Memory-mapped writes are not seen (the store does not map its files; "-shm" is left out).
 *  - Whole writes: the log keeps each write whole, and a cut keeps a prefix of them; tearing the
 *    write in flight (some of its sectors kept) is the cutting side's choice (power_loss.h,
 *    kill-supervisor --torn).
 *
 * Faults: with POWERCUT_FAULTS=N the library also makes about one in N writes, truncations and
 * syncs of a followed file fail, as a full or failing disk would: a write fails with ENOSPC
 * (half the time after writing half its bytes: a short write), a truncation or a sync with EIO,
 * and nothing of a failed call reaches the file (kill-supervisor --faults); vector writes
 * (writev, pwritev) likewise, a short one writing the first half of the vector's bytes. With
 * POWERCUT_FAULT_BURST=K the K operations after a fault fail too, as on a disk that stays full.
 * With POWERCUT_READ_FAULTS=N about one in N reads (read, pread) of a followed file fails too
 * (a rate of its own: an open reads hundreds of pages), with ETIMEDOUT, as a network file
 * system's read that timed out (not EIO: SQLite reports a read failing with EIO as a damaged
 * file, SQLITE_CORRUPT, and the engine then says storeCorrupt).
 * A program that preloads the library may also call powercut_set_failing(1) (found with
 * dlsym) to make every such operation fail from then on, powercut_set_failing(2) to make only
 * the syncs fail, powercut_set_failing(3) to make the next sync fail and no other operation
 * (the mode then goes back to 0), powercut_set_failing(4) to make every read fail (ETIMEDOUT,
 * below) and nothing else, and powercut_set_failing(0) to stop: a disk that fails at a moment
 * the test chooses (close_on_failing_disk.c, chosen_power_cuts.c).
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 16
#define MAX_FDS 65536

/* One write or truncation not yet synced. `data` is NULL for a truncation to `offset`. */
typedef struct op {
    off_t offset;
    size_t length;
    char *data;
} op;

typedef struct file {
    char path[PATH_MAX];
    char image[PATH_MAX + 16];
    char log[PATH_MAX + 16];
    /* The log while a sync applies it (`F.applying`). */
    char applying[PATH_MAX + 16];
    int log_fd; /* `log` opened for appending, or -1 */
    op *ops;
    size_t count, capacity;
    /* Bumped when the path is unlinked: descriptors of the old file are no longer followed. */
    unsigned generation;
} file;

static file g_files[MAX_FILES];
static size_t g_file_count;
static struct {
    int file; /* index + 1; 0: not followed */
    unsigned generation;
} g_fds[MAX_FDS];
static char g_store[PATH_MAX];
static size_t g_store_length;
/* The store's directory, to tell its fsync from others. */
static dev_t g_dir_dev;
static ino_t g_dir_ino;
static int g_enabled;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* POWERCUT_FAULTS: one in how many operations on a followed file fails (0: none). */
static unsigned long g_fault_rate;
/* POWERCUT_FAULT_BURST: how many operations after a fault fail too (a disk that stays full). */
static unsigned long g_fault_burst, g_burst_left;
/* POWERCUT_READ_FAULTS=N: about one in N reads of a followed file fails (0: none). */
static unsigned long g_read_fault_rate;
static unsigned long long g_fault_state;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static int (*real_unlink)(const char *);
static int (*real_rename)(const char *, const char *);

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "powercut shim: no %s\n", name);
        abort();
    }
    return f;
}

static void init(void) {
    real_open = (int (*)(const char *, int, ...))next("open");
    real_open64 = (int (*)(const char *, int, ...))next("open64");
    real_close = (int (*)(int))next("close");
    real_write = (ssize_t(*)(int, const void *, size_t))next("write");
    real_pwrite = (ssize_t(*)(int, const void *, size_t, off_t))next("pwrite");
    real_pwrite64 = (ssize_t(*)(int, const void *, size_t, off_t))next("pwrite64");
    real_writev = (ssize_t(*)(int, const struct iovec *, int))next("writev");
    real_pwritev = (ssize_t(*)(int, const struct iovec *, int, off_t))next("pwritev");
    real_pwritev64 = (ssize_t(*)(int, const struct iovec *, int, off_t))next("pwritev64");
    real_ftruncate = (int (*)(int, off_t))next("ftruncate");
    real_ftruncate64 = (int (*)(int, off_t))next("ftruncate64");
    real_fsync = (int (*)(int))next("fsync");
    real_fdatasync = (int (*)(int))next("fdatasync");
    real_read = (ssize_t(*)(int, void *, size_t))next("read");
    real_pread = (ssize_t(*)(int, void *, size_t, off_t))next("pread");
    real_pread64 = (ssize_t(*)(int, void *, size_t, off_t))next("pread64");
    real_unlink = (int (*)(const char *))next("unlink");
    real_rename = (int (*)(const char *, const char *))next("rename");
    const char *store = getenv("POWERCUT_STORE");
    if (store && *store && strlen(store) < sizeof g_store) {
        snprintf(g_store, sizeof g_store, "%s", store);
        g_store_length = strlen(g_store);
        g_enabled = 1;
        const char *faults = getenv("POWERCUT_FAULTS");
        if (faults) g_fault_rate = strtoul(faults, NULL, 10);
        const char *burst = getenv("POWERCUT_FAULT_BURST");
        if (burst) g_fault_burst = strtoul(burst, NULL, 10);
        const char *reads = getenv("POWERCUT_READ_FAULTS");
        if (reads) g_read_fault_rate = strtoul(reads, NULL, 10);
        g_fault_state = (unsigned long long)getpid() * 0x9E3779B97F4A7C15ULL ^ (unsigned long long)time(NULL);
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", g_store);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        struct stat st;
        if (stat(slash ? (dir[0] ? dir : "/") : ".", &st) == 0) {
            g_dir_dev = st.st_dev;
            g_dir_ino = st.st_ino;
        }
    }
}

static int followed(const char *path) {
    if (!g_enabled || !path || strncmp(path, g_store, g_store_length) != 0) return 0;
    const char *rest = path + g_store_length;
    if (*rest == '\0') return 1;
    return *rest == '-' && strcmp(rest, "-shm") != 0;
}

static void take_over_log(struct file *f);

/* The entry of `path`, made if new. Called with the lock held. */
static file *entry(const char *path) {
    for (size_t i = 0; i < g_file_count; i++) {
        if (strcmp(g_files[i].path, path) == 0) return &g_files[i];
    }
    if (g_file_count == MAX_FILES) {
        fprintf(stderr, "powercut shim: more than %d store files\n", MAX_FILES);
        abort();
    }
    file *f = &g_files[g_file_count++];
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->image, sizeof f->image, "%s.durable", path);
    snprintf(f->log, sizeof f->log, "%s.unsynced", path);
    snprintf(f->applying, sizeof f->applying, "%s.applying", path);
    f->log_fd = -1;
    take_over_log(f);
    return f;
}

/* The followed file behind `fd`, or NULL. Called with the lock held. */
static file *of(int fd) {
    if (fd < 0 || fd >= MAX_FDS || !g_fds[fd].file) return NULL;
    file *f = &g_files[g_fds[fd].file - 1];
    return f->generation == g_fds[fd].generation ? f : NULL;
}

static void append_all(int fd, const void *data, size_t length) {
    const char *p = data;
    while (length > 0) {
        ssize_t n = real_write(fd, p, length);
        if (n <= 0) abort();
        p += n;
        length -= (size_t)n;
    }
}

/* Appends an operation to the file's log of writes not yet synced. */
static void log_op(file *f, off_t offset, const void *data, size_t length, int truncation) {
    if (f->log_fd < 0) {
        f->log_fd = real_open(f->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (f->log_fd < 0) abort();
    }
    unsigned char head[17];
    unsigned long long o = (unsigned long long)offset, l = truncation ? 0 : (unsigned long long)length;
    for (int i = 0; i < 8; i++) {
        head[i] = (unsigned char)(o >> (8 * i));
        head[8 + i] = (unsigned char)(l >> (8 * i));
    }
    head[16] = truncation ? 1 : 0;
    append_all(f->log_fd, head, sizeof head);
    if (!truncation) append_all(f->log_fd, data, length);
}

/* Keeps an operation in memory, for the next sync to apply. */
static void keep_op(file *f, off_t offset, const void *data, size_t length, int truncation) {
    if (f->count == f->capacity) {
        size_t capacity = f->capacity ? f->capacity * 2 : 64;
        op *ops = realloc(f->ops, capacity * sizeof *ops);
        if (!ops) abort();
        f->ops = ops;
        f->capacity = capacity;
    }
    op *o = &f->ops[f->count++];
    o->offset = offset;
    o->length = length;
    o->data = NULL;
    if (!truncation) {
        o->data = malloc(length ? length : 1);
        if (!o->data) abort();
        memcpy(o->data, data, length);
    }
}

static void remember(file *f, off_t offset, const void *data, size_t length, int truncation) {
    log_op(f, offset, data, length, truncation);
    keep_op(f, offset, data, length, truncation);
}

/* The whole file at `path` (NULL and 0 when it is missing); the caller frees it. */
static char *read_whole(const char *path, size_t *size) {
    *size = 0;
    int fd = real_open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t capacity = 0;
    char *bytes = NULL;
    for (;;) {
        if (*size == capacity) {
            capacity = capacity ? capacity * 2 : 65536;
            bytes = realloc(bytes, capacity);
            if (!bytes) abort();
        }
        ssize_t n = real_read(fd, bytes + *size, capacity - *size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) abort();
        if (n == 0) break;
        *size += (size_t)n;
    }
    real_close(fd);
    return bytes;
}

/* Keeps the whole records of log bytes in memory; returns the length they take (a record cut
 * short, the process killed while logging it, ends them). */
static size_t keep_records(file *f, const char *bytes, size_t size) {
    size_t at = 0;
    while (size - at >= 17) {
        const unsigned char *head = (const unsigned char *)bytes + at;
        unsigned long long offset = 0, length = 0;
        for (int i = 7; i >= 0; i--) {
            offset = offset << 8 | head[i];
            length = length << 8 | head[8 + i];
        }
        int truncation = head[16] == 1;
        if (!truncation && length > size - at - 17) break;
        keep_op(f, (off_t)offset, bytes + at + 17, truncation ? 0 : (size_t)length, truncation);
        at += 17 + (truncation ? 0 : (size_t)length);
    }
    return at;
}

static void write_image(file *f);

/* What an earlier process killed without a cut left. `F.applying`, when it was killed while
 * applying a sync whose real sync had returned: those writes are on disk, so they are applied to
 * the image now, all of them (a kill during this leaves the file, and the next process applies
 * it again, which leaves the image as applying it once does). The log: writes not yet synced,
 * which the kernel still holds, so they stay unsynced in this process too (a cut now may take
 * them) and its first sync of the file applies them before its own; a record cut short (the
 * process killed while logging it) ends the log, and is cut off. Called with the lock held, when
 * the file's entry is made. */
static void take_over_log(file *f) {
    size_t applying_size, log_size;
    char *applying = read_whole(f->applying, &applying_size);
    if (applying) {
        keep_records(f, applying, applying_size);
        write_image(f);
        real_unlink(f->applying);
        free(applying);
    }
    char *log = read_whole(f->log, &log_size);
    size_t log_kept = log ? keep_records(f, log, log_size) : 0;
    if (log && log_kept < log_size && truncate(f->log, (off_t)log_kept) != 0) abort();
    free(log);
}

/* Drops the writes kept in memory (not the log). */
static void forget_ops(file *f) {
    for (size_t i = 0; i < f->count; i++) free(f->ops[i].data);
    f->count = 0;
}

/* Drops the writes not yet synced: in memory and in the log. */
static void forget(file *f) {
    forget_ops(f);
    if (f->log_fd >= 0) {
        real_close(f->log_fd);
        f->log_fd = -1;
    }
    real_unlink(f->log);
    real_unlink(f->applying);
}

/* Writes the writes kept in memory to the image, in order, and drops them from memory. */
static void write_image(file *f) {
    int fd = real_open(f->image, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "powercut shim: cannot open %s: %s\n", f->image, strerror(errno));
        abort();
    }
    for (size_t i = 0; i < f->count; i++) {
        const op *o = &f->ops[i];
        if (!o->data) {
            if (real_ftruncate(fd, o->offset) != 0) abort();
            continue;
        }
        size_t done = 0;
        while (done < o->length) {
            ssize_t n = real_pwrite(fd, o->data + done, o->length - done, o->offset + (off_t)done);
            if (n <= 0) abort();
            done += (size_t)n;
        }
    }
    real_close(fd);
    forget_ops(f);
}

/* A sync (the real one returned): the file's writes so far reach its image, in order. The log
 * becomes `F.applying` first, and is removed once they have: a kill from then on leaves a prefix
 * of them in the image, which a cut made at once keeps (a state a power cut during the sync may
 * leave); a process started without a cut finishes applying them (take_over_log), as they were
 * synced. */
static void apply(file *f) {
    if (f->log_fd >= 0) {
        real_close(f->log_fd);
        f->log_fd = -1;
    }
    if (real_rename(f->log, f->applying) != 0 && errno != ENOENT) abort();
    write_image(f);
    real_unlink(f->applying);
}

/* The marker of a file created and not yet in a synced directory. */
static void marker_of(const char *path, char *out, size_t size) { snprintf(out, size, "%s.newentry", path); }

static int opened(const char *path, int fd, int flags, int existed) {
    if (fd < 0 || fd >= MAX_FDS || !followed(path)) return fd;
    pthread_mutex_lock(&g_lock);
    if (!existed) {
        char marker[PATH_MAX + 16];
        marker_of(path, marker, sizeof marker);
        int m = real_open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (m < 0) abort();
        real_close(m);
    }
    file *f = entry(path);
    g_fds[fd].file = (int)(f - g_files) + 1;
    g_fds[fd].generation = f->generation;
    if (flags & O_TRUNC) remember(f, 0, NULL, 0, 1);
    pthread_mutex_unlock(&g_lock);
    return fd;
}

static void written(int fd, off_t offset, const struct iovec *iov, int count, ssize_t n) {
    if (n <= 0) return;
    pthread_mutex_lock(&g_lock);
    file *f = of(fd);
    size_t left = (size_t)n;
    for (int i = 0; f && i < count && left > 0; i++) {
        size_t length = iov[i].iov_len < left ? iov[i].iov_len : left;
        remember(f, offset, iov[i].iov_base, length, 0);
        offset += (off_t)length;
        left -= length;
    }
    pthread_mutex_unlock(&g_lock);
}

/* One buffer written at `offset`. */
static ssize_t written_one(int fd, off_t offset, const void *data, size_t length, ssize_t n) {
    struct iovec v = {(void *)data, length};
    written(fd, offset, &v, 1, n);
    return n;
}

static mode_t mode_of(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* open and open64 through `real`, followed when the path is a store file. */
static int opening(int (*real)(const char *, int, ...), const char *path, int flags, mode_t mode) {
    int existed = followed(path) && access(path, F_OK) == 0;
    return opened(path, real(path, flags, mode), flags, existed);
}

int open(const char *path, int flags, ...) {
    pthread_once(&g_once, init);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    return opening(real_open, path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    pthread_once(&g_once, init);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    return opening(real_open64, path, flags, mode);
}

int close(int fd) {
    pthread_once(&g_once, init);
    pthread_mutex_lock(&g_lock);
    /* Writes not synced stay with the file: closing does not make them durable. */
    if (fd >= 0 && fd < MAX_FDS) g_fds[fd].file = 0;
    pthread_mutex_unlock(&g_lock);
    return real_close(fd);
}

/* The next word of the library's PRNG. Called with the lock held. */
static unsigned long long random_word(void) {
    unsigned long long z = (g_fault_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Set by powercut_set_failing(): 1, every operation on a followed file fails; 2, its syncs
 * only; 3, its next sync only, then 0; 4, its reads only (read without the lock first, hence
 * atomic). */
static int g_failing;

void powercut_set_failing(int mode);
void powercut_set_failing(int mode) {
    pthread_once(&g_once, init);
    __atomic_store_n(&g_failing, mode, __ATOMIC_SEQ_CST);
}

/* Whether this operation on `fd` (a sync when `is_sync`) fails: a followed file, and the dice
 * say so, or powercut_set_failing. */
static int fault(int fd, int is_sync) {
    int mode = __atomic_load_n(&g_failing, __ATOMIC_SEQ_CST);
    if (!g_fault_rate && !mode) return 0;
    pthread_mutex_lock(&g_lock);
    int failing = 0;
    if (of(fd) && (mode == 1 || (mode == 2 && is_sync))) {
        failing = 1;
    } else if (of(fd) && mode == 3 && is_sync) {
        failing = __atomic_compare_exchange_n(&g_failing, &mode, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    } else if (of(fd) && g_fault_rate) {
        unsigned long long z = random_word();
        failing = z % g_fault_rate == 0 ? (z >> 32) % 2 + 1 : 0; /* 1: fail, 2: a short write */
        if (g_burst_left) {
            g_burst_left--;
            failing = 1;
        } else if (failing) {
            g_burst_left = g_fault_burst;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return failing;
}

static ssize_t failed(int error) {
    errno = error;
    return -1;
}

/* Where a write through `fd`'s file offset lands, or -1 when `fd` is not followed. */
static off_t position(int fd) {
    off_t at = -1;
    pthread_mutex_lock(&g_lock);
    if (of(fd)) at = lseek(fd, 0, SEEK_CUR);
    pthread_mutex_unlock(&g_lock);
    return at;
}

/* A write of `length` bytes that may fault: fails, or writes half of them (a short write). */
static size_t faulted_length(int fd, size_t length, int *fail) {
    int f = fault(fd, 0);
    *fail = f == 1 || (f == 2 && length < 2);
    return f == 2 ? length / 2 : length;
}

/* Whether this read of `fd` fails (ETIMEDOUT, nothing read): a followed file, and
 * powercut_set_failing(4), or the dice of POWERCUT_READ_FAULTS say so. */
static int read_fault(int fd) {
    int mode = __atomic_load_n(&g_failing, __ATOMIC_SEQ_CST);
    if (mode != 4 && !g_read_fault_rate) return 0;
    pthread_mutex_lock(&g_lock);
    int failing = of(fd) && (mode == 4 || random_word() % g_read_fault_rate == 0);
    pthread_mutex_unlock(&g_lock);
    return failing;
}

ssize_t read(int fd, void *data, size_t length) {
    pthread_once(&g_once, init);
    if (read_fault(fd)) return failed(ETIMEDOUT);
    return real_read(fd, data, length);
}

ssize_t pread(int fd, void *data, size_t length, off_t offset) {
    pthread_once(&g_once, init);
    if (read_fault(fd)) return failed(ETIMEDOUT);
    return real_pread(fd, data, length, offset);
}

ssize_t pread64(int fd, void *data, size_t length, off_t offset) {
    pthread_once(&g_once, init);
    if (read_fault(fd)) return failed(ETIMEDOUT);
    return real_pread64(fd, data, length, offset);
}

ssize_t write(int fd, const void *data, size_t length) {
    pthread_once(&g_once, init);
    int fail;
    length = faulted_length(fd, length, &fail);
    if (fail) return failed(ENOSPC);
    off_t at = position(fd);
    ssize_t n = real_write(fd, data, length);
    return at >= 0 ? written_one(fd, at, data, length, n) : n;
}

/* pwrite and pwrite64 through `real`: faulted, then remembered. */
static ssize_t positioned(ssize_t (*real)(int, const void *, size_t, off_t), int fd, const void *data, size_t length,
                          off_t offset) {
    int fail;
    length = faulted_length(fd, length, &fail);
    if (fail) return failed(ENOSPC);
    return written_one(fd, offset, data, length, real(fd, data, length, offset));
}

ssize_t pwrite(int fd, const void *data, size_t length, off_t offset) {
    pthread_once(&g_once, init);
    return positioned(real_pwrite, fd, data, length, offset);
}

ssize_t pwrite64(int fd, const void *data, size_t length, off_t offset) {
    pthread_once(&g_once, init);
    return positioned(real_pwrite64, fd, data, length, offset);
}

/* The vector a write through `fd` writes, or NULL when it fails (a fault): `iov` whole, or, for a
 * short write, its first half of bytes, cut in a copy left in `*part` (freed by the caller; NULL
 * otherwise). `*count` becomes the returned vector's entries. */
static const struct iovec *vector_to_write(int fd, const struct iovec *iov, int *count, struct iovec **part) {
    *part = NULL;
    int f = fault(fd, 0);
    if (!f) return iov;
    size_t total = 0;
    for (int i = 0; i < *count; i++) total += iov[i].iov_len;
    if (f == 1 || total < 2 || *count <= 0) return NULL;
    struct iovec *cut = malloc((size_t)*count * sizeof *cut);
    if (!cut) abort();
    size_t left = total / 2;
    int n = 0;
    for (int i = 0; i < *count && left > 0; i++) {
        cut[n] = iov[i];
        if (cut[n].iov_len > left) cut[n].iov_len = left;
        left -= cut[n].iov_len;
        n++;
    }
    *count = n;
    *part = cut;
    return cut;
}

/* Vector writes fault as the others do: fail, or write half their bytes. */
ssize_t writev(int fd, const struct iovec *iov, int count) {
    pthread_once(&g_once, init);
    struct iovec *part;
    const struct iovec *v = vector_to_write(fd, iov, &count, &part);
    if (!v) return failed(ENOSPC);
    off_t at = position(fd);
    ssize_t n = real_writev(fd, v, count);
    if (at >= 0) written(fd, at, v, count, n);
    free(part);
    return n;
}

/* pwritev and pwritev64 through `real`: faulted, then remembered. */
static ssize_t positioned_vector(ssize_t (*real)(int, const struct iovec *, int, off_t), int fd,
                                 const struct iovec *iov, int count, off_t offset) {
    struct iovec *part;
    const struct iovec *v = vector_to_write(fd, iov, &count, &part);
    if (!v) return failed(ENOSPC);
    ssize_t n = real(fd, v, count, offset);
    written(fd, offset, v, count, n);
    free(part);
    return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
    pthread_once(&g_once, init);
    return positioned_vector(real_pwritev, fd, iov, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int count, off_t offset) {
    pthread_once(&g_once, init);
    return positioned_vector(real_pwritev64, fd, iov, count, offset);
}

/* Whether `fd` is the store's folder. */
static int is_store_folder(int fd) {
    struct stat st;
    return g_enabled && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == g_dir_dev && st.st_ino == g_dir_ino;
}

static int truncated(int fd, off_t length, int result) {
    if (result != 0) return result;
    pthread_mutex_lock(&g_lock);
    file *f = of(fd);
    if (f) remember(f, length, NULL, 0, 1);
    pthread_mutex_unlock(&g_lock);
    return result;
}

/* ftruncate and ftruncate64 through `real`: faulted, then remembered. */
static int truncating(int (*real)(int, off_t), int fd, off_t length) {
    if (fault(fd, 0)) return (int)failed(EIO);
    return truncated(fd, length, real(fd, length));
}

int ftruncate(int fd, off_t length) {
    pthread_once(&g_once, init);
    return truncating(real_ftruncate, fd, length);
}

int ftruncate64(int fd, off_t length) {
    pthread_once(&g_once, init);
    return truncating(real_ftruncate64, fd, length);
}

static void synced(int fd) {
    pthread_mutex_lock(&g_lock);
    file *f = of(fd);
    if (f) apply(f);
    if (!f && is_store_folder(fd)) {
        /* The directory is synced: every file created in it so far stays after a power cut. */
        static const char *const suffixes[] = {"", "-wal", "-journal", "-wfjournal"};
        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
            char path[PATH_MAX + 16], marker[PATH_MAX + 32];
            snprintf(path, sizeof path, "%s%s", g_store, suffixes[i]);
            marker_of(path, marker, sizeof marker);
            real_unlink(marker);
        }
    }
    pthread_mutex_unlock(&g_lock);
}

/* fsync and fdatasync through `real`: faulted, then applied to the image. */
static int syncing(int (*real)(int), int fd) {
    if (fault(fd, 1)) return (int)failed(EIO);
    int result = real(fd);
    if (result == 0) synced(fd);
    return result;
}

int fsync(int fd) {
    pthread_once(&g_once, init);
    return syncing(real_fsync, fd);
}

int fdatasync(int fd) {
    pthread_once(&g_once, init);
    return syncing(real_fdatasync, fd);
}

int unlink(const char *path) {
    pthread_once(&g_once, init);
    int result = real_unlink(path);
    if (result == 0 && followed(path)) {
        pthread_mutex_lock(&g_lock);
        file *f = entry(path);
        forget(f);
        f->generation++;
        real_unlink(f->image);
        pthread_mutex_unlock(&g_lock);
    }
    return result;
}

int rename(const char *from, const char *to) {
    pthread_once(&g_once, init);
    if (followed(from) || followed(to)) {
        fprintf(stderr, "powercut shim: renaming a store file (%s -> %s) is not modelled\n", from, to);
        abort();
    }
    return real_rename(from, to);
}
