/*
 * kill-supervisor -- launches kill-driver, SIGKILLs it at random moments,
 * relaunches it on the same store, and checks the store once the workflow is
 * done.
 *
 *   kill-supervisor --driver PATH --dir DIR [--kills N] [--seed S]
 *                   [--min-ms A] [--max-ms B] [--timeout S] [--keep]
 *                   [--power-cut SHIM [--durability full|normal]] [--foreground-writes]
 *                   [--pauses] [--torn] [--cuts-later] [--shim SHIM]
 *                   [--faults N [--fault-burst K] [--read-faults R]]
 *
 * Rounds: each round is a fresh store DIR/round-NNN.sqlite and a fresh
 * 50-node workflow built from seed S*1000+NNN. The driver is launched, and
 * unless N kills have been made already, killed after a random delay (uniform
 * in [A, B] ms, default 2 to 40 ms, from a PRNG seeded with S), then launched
 * again, until it finishes by itself (exit 0). Then `kill-driver check`
 * verifies the store. Rounds follow one another until N kills (default 50)
 * have been made; the round during which the N-th kill lands is then let
 * finish without kills, and checked.
 *
 * A driver that exits with anything but 0 (a broken rule: 10), a check that
 * fails, or a launch that does not finish within the timeout (default 120 s)
 * stops everything: the files stay in DIR for a post-mortem and the exit
 * status is 1. On success the round files are removed, unless --keep.
 *
 * --power-cut SHIM makes every kill a power cut: the driver runs with SHIM
 * (powercut_shim.so) preloaded, which keeps beside each store file the file
 * as a power cut would leave it (its synced writes only, `F.durable`) and the
 * writes not yet synced (`F.unsynced`). After each kill each store file
 * becomes its image plus a random prefix of those writes (SQLite's "-shm" is
 * removed: SQLite rebuilds it), and before each launch each file is copied to
 * its image. The driver runs on --durability (default full); with normal, a
 * power cut may take the last calls' changes, and the driver is told so
 * (kill-driver --may-lose-commits). --foreground-writes is handed to the
 * driver: the engine folds its journal on the calling thread. So is --pauses:
 * the driver stops for 100 to 200 ms now and then, so the store's folder folds
 * while the engine is quiet (use longer delays, --max-ms 400). --torn makes
 * each cut tear the write in flight: of the first unsynced write not kept,
 * each 512-byte sector reaches the disk or not, at random. --cuts-later (with
 * --power-cut) makes half the kills, at random, plain kills: the files stay as
 * the kill left them, their writes not yet synced still in the system's cache
 * (the shim's logs of them, which the next launch takes over), so that a cut
 * after a later kill may take writes of several launches: a power cut some time
 * after a crash.
 *
 * --faults N (with --shim SHIM, or with --power-cut) makes about one in N
 * writes, truncations and syncs of the store's files fail (a full or failing
 * disk); the driver (kill-driver --store-faults) ends a launch whose call the
 * store refused with exit status 11, and is launched again. --fault-burst K
 * makes the K operations after each fault fail too. --read-faults R makes
 * about one in R reads of the store's files fail too.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "power_loss.h"

static const char *g_driver;
static const char *g_dir;
/* --power-cut or --shim: the shim to preload, or NULL. */
static const char *g_shim;
/* --power-cut: each kill is a power cut. */
static int g_cut_power;
/* --faults N: one in N operations on the store's files fails (0: none). */
static unsigned long g_faults;
/* --fault-burst K: the K operations after a fault fail too. */
static unsigned long g_fault_burst;
/* --durability, for the driver under the shim (--power-cut or --shim). */
static const char *g_durability = "full";
/* --foreground-writes, for the driver. */
static int g_foreground_writes;
/* --pauses, for the driver. */
static int g_pauses;
/* --torn: a power cut tears the write in flight. */
static int g_torn;
/* --cuts-later: half the kills leave the files as they are, the cut coming after a later one. */
static int g_cuts_later;
/* --read-faults N: with --faults, one in N reads of the store's files fails too (0: none). */
static unsigned long g_read_faults;

static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Launches `kill-driver MODE --store STORE --seed SEED`, output appended to OUT. */
static pid_t launch(const char *mode, const char *store, unsigned long long seed, const char *out) {
    char seed_text[32];
    snprintf(seed_text, sizeof seed_text, "%llu", seed);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("kill-supervisor: fork");
        exit(1);
    }
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        const char *args[14];
        int n = 0;
        args[n++] = g_driver;
        args[n++] = mode;
        args[n++] = "--store";
        args[n++] = store;
        args[n++] = "--seed";
        args[n++] = seed_text;
        if (g_shim && strcmp(mode, "run") == 0) {
            setenv("LD_PRELOAD", g_shim, 1);
            setenv("POWERCUT_STORE", store, 1);
            if (g_faults) {
                char rate[32];
                snprintf(rate, sizeof rate, "%lu", g_faults);
                setenv("POWERCUT_FAULTS", rate, 1);
                snprintf(rate, sizeof rate, "%lu", g_fault_burst);
                setenv("POWERCUT_FAULT_BURST", rate, 1);
                snprintf(rate, sizeof rate, "%lu", g_read_faults);
                setenv("POWERCUT_READ_FAULTS", rate, 1);
            }
        }
        if (g_shim) {
            args[n++] = "--durability";
            args[n++] = g_durability;
            if (g_cut_power && strcmp(g_durability, "normal") == 0) args[n++] = "--may-lose-commits";
        }
        if (g_faults) args[n++] = "--store-faults";
        if (g_foreground_writes) args[n++] = "--foreground-writes";
        if (g_pauses) args[n++] = "--pauses";
        args[n] = NULL;
        execv(g_driver, (char *const *)args);
        perror("kill-supervisor: exec");
        _exit(127);
    }
    return pid;
}

/* Waits for `pid` up to `timeout` seconds; returns its wait status, or -1 on timeout (then kills it). */
static int wait_for(pid_t pid, double timeout) {
    double deadline = now_seconds() + timeout;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        if (r < 0 && errno != EINTR) {
            perror("kill-supervisor: waitpid");
            exit(1);
        }
        if (now_seconds() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        sleep_us(1000);
    }
}

static void print_tail(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    char lines[20][1024];
    int count = 0;
    while (fgets(lines[count % 20], sizeof lines[0], f)) count++;
    fclose(f);
    fprintf(stderr, "---- last lines of %s ----\n", path);
    for (int i = count > 20 ? count - 20 : 0; i < count; i++) fputs(lines[i % 20], stderr);
    fprintf(stderr, "----\n");
}

static void describe(int status, char *out, size_t size) {
    if (status == -1) {
        snprintf(out, size, "did not finish in time");
    } else if (WIFEXITED(status)) {
        snprintf(out, size, "exited with %d", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        snprintf(out, size, "died of signal %d", WTERMSIG(status));
    } else {
        snprintf(out, size, "status %d", status);
    }
}

static void remove_round_files(const char *store) {
    static const char *const suffixes[] = {".jobs", ".jobs.tmp", ".log", ".out"};
    char path[4200];
    power_loss_remove_store(store);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", store, suffixes[i]);
        unlink(path);
    }
}

static void fail_io(const char *what, const char *path) {
    fprintf(stderr, "kill-supervisor: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

/* After a kill under the shim: the power cut, each file keeping a random prefix of the writes it
 * had not synced (`context`, the PRNG's state). */
static size_t keep_at_random(size_t index, size_t unsynced, void *context) {
    (void)index;
    return (size_t)(next_random(context) % (unsynced + 1));
}

/* --torn: each sector of the write in flight kept or not, at random. */
static int sector_at_random(size_t index, void *context) {
    (void)index;
    return (int)(next_random(context) & 1);
}

static void cut_power(const char *store, uint64_t *rng) {
    power_loss_cut(store, keep_at_random, g_torn ? sector_at_random : NULL, rng, 0);
}

static void usage(void) {
    fprintf(stderr, "usage: kill-supervisor --driver PATH --dir DIR [--kills N] [--seed S] [--min-ms A] [--max-ms B]"
                    " [--timeout SECONDS] [--keep] [--power-cut SHIM [--durability full|normal]]"
                    " [--foreground-writes] [--pauses] [--torn] [--cuts-later] [--shim SHIM] [--faults N [--fault-burst K]"
                    " [--read-faults R]]\n");
    exit(2);
}

int main(int argc, char **argv) {
    long kills_wanted = 50;
    unsigned long long seed = 1;
    double min_ms = 2, max_ms = 40, timeout = 120;
    int keep = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--driver") == 0 && has_value) {
            g_driver = argv[++i];
        } else if (strcmp(a, "--dir") == 0 && has_value) {
            g_dir = argv[++i];
        } else if (strcmp(a, "--kills") == 0 && has_value) {
            kills_wanted = atol(argv[++i]);
        } else if (strcmp(a, "--seed") == 0 && has_value) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(a, "--min-ms") == 0 && has_value) {
            min_ms = atof(argv[++i]);
        } else if (strcmp(a, "--max-ms") == 0 && has_value) {
            max_ms = atof(argv[++i]);
        } else if (strcmp(a, "--timeout") == 0 && has_value) {
            timeout = atof(argv[++i]);
        } else if (strcmp(a, "--keep") == 0) {
            keep = 1;
        } else if (strcmp(a, "--foreground-writes") == 0) {
            g_foreground_writes = 1;
        } else if (strcmp(a, "--pauses") == 0) {
            g_pauses = 1;
        } else if (strcmp(a, "--torn") == 0) {
            g_torn = 1;
        } else if (strcmp(a, "--cuts-later") == 0) {
            g_cuts_later = 1;
        } else if (strcmp(a, "--read-faults") == 0 && has_value) {
            g_read_faults = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--power-cut") == 0 && has_value) {
            g_shim = argv[++i];
            g_cut_power = 1;
        } else if (strcmp(a, "--shim") == 0 && has_value) {
            g_shim = argv[++i];
        } else if (strcmp(a, "--faults") == 0 && has_value) {
            g_faults = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--fault-burst") == 0 && has_value) {
            g_fault_burst = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--durability") == 0 && has_value &&
                   (strcmp(argv[i + 1], "full") == 0 || strcmp(argv[i + 1], "normal") == 0)) {
            g_durability = argv[++i];
        } else {
            usage();
        }
    }
    if (!g_driver || !g_dir || kills_wanted < 0 || min_ms < 0 || max_ms < min_ms) usage();
    if (!g_shim && strcmp(g_durability, "full") != 0) usage(); /* --durability goes with --power-cut */
    if (g_faults && !g_shim) usage();                            /* --faults needs the shim */
    if (g_cuts_later && !g_cut_power) usage();                   /* --cuts-later goes with --power-cut */
    if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
        perror("kill-supervisor: mkdir");
        return 1;
    }
    /* The shim follows the store by the path the engine opens, which SQLite makes absolute. */
    static char absolute_dir[4096];
    if (g_shim && !realpath(g_dir, absolute_dir)) fail_io("cannot resolve", g_dir);
    if (g_shim) g_dir = absolute_dir;
    setvbuf(stdout, NULL, _IOLBF, 0);

    uint64_t rng = seed;
    long kills = 0, launches = 0;
    int rounds = 0;
    double started = now_seconds();
    printf("kill-supervisor: %ld %s wanted, delays %.1f-%.1f ms, seed %llu, files in %s\n", kills_wanted,
           g_cut_power ? "power cuts (kills, then the synced writes kept and a prefix of the others)" : "kills", min_ms,
           max_ms, seed, g_dir);
    if (g_shim) printf("kill-supervisor: durability %s\n", g_durability);
    if (g_faults) printf("kill-supervisor: about one in %lu writes and syncs of the store fails\n", g_faults);
    long faults = 0, uncut = 0;

    for (;; rounds++) {
        char store[4096], out[4200];
        unsigned long long round_seed = seed * 1000ULL + (unsigned long long)rounds;
        snprintf(store, sizeof store, "%s/round-%03d.sqlite", g_dir, rounds);
        snprintf(out, sizeof out, "%s.out", store);
        remove_round_files(store);
        long round_kills = 0;
        double round_started = now_seconds();
        /* The last kill was not cut (--cuts-later): the next launch starts on the files and the
         * unsynced writes as it left them. */
        int carried = 0;

        for (;;) {
            /* Under the shim: the files as they are now are durable (and its logs of unsynced
             * writes start empty, so that they do not grow launch after launch). */
            if (g_shim && !carried) power_loss_make_images(store);
            carried = 0;
            pid_t pid = launch("run", store, round_seed, out);
            launches++;
            int status;
            if (kills < kills_wanted) {
                long delay_us = (long)(min_ms * 1000 + (double)(next_random(&rng) % 1000001ULL) / 1e6 * (max_ms - min_ms) * 1000);
                double deadline = now_seconds() + delay_us / 1e6;
                pid_t r = 0;
                while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_seconds() < deadline) {
                    long left = (long)((deadline - now_seconds()) * 1e6);
                    sleep_us(left > 200 ? 200 : (left > 0 ? left : 1));
                }
                if (r == 0) {
                    kill(pid, SIGKILL);
                    waitpid(pid, &status, 0);
                }
            } else {
                status = wait_for(pid, timeout);
            }
            if (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
                kills++;
                round_kills++;
                if (g_cuts_later && next_random(&rng) % 2) {
                    carried = 1;
                    uncut++;
                } else if (g_cut_power) {
                    cut_power(store, &rng);
                }
                continue;
            }
            if (g_faults && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 11) {
                faults++; /* the store refused a write: the next launch goes on */
                continue;
            }
            if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                /* On "full" every file the engine made must be in a synced folder by the time its
                 * calls returned; at the latest when the driver is done. */
                const char *unsynced_entry =
                    g_cut_power && strcmp(g_durability, "full") == 0 ? power_loss_new_entry(store) : NULL;
                if (unsynced_entry) {
                    fprintf(stderr, "kill-supervisor: FAILED: round %d (seed %llu): %s was made and its folder never "
                                    "synced: a power cut would take it, and the calls it holds\n",
                            rounds, round_seed, unsynced_entry);
                    return 1;
                }
                /* A power cut right after the engine closed takes nothing, on "normal" too (the
                 * close folds the journal and checkpoints in synced writes, and a close the disk
                 * refused is reported: the driver then exits 11 and is launched again): the
                 * check reads what it left. */
                if (g_cut_power) cut_power(store, &rng);
                break; /* done */
            }
            char what[64];
            describe(status, what, sizeof what);
            fprintf(stderr, "kill-supervisor: FAILED: round %d (seed %llu), launch %ld after %ld kills: the driver %s\n",
                    rounds, round_seed, launches, kills, what);
            print_tail(out);
            fprintf(stderr, "kill-supervisor: the store and its journal are kept: %s, %s.log, %s.jobs\n", store, store, store);
            return 1;
        }

        /* The round is done: check the store through a fresh engine. */
        pid_t pid = launch("check", store, round_seed, out);
        int status = wait_for(pid, timeout);
        if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            char what[64];
            describe(status, what, sizeof what);
            fprintf(stderr, "kill-supervisor: FAILED: round %d (seed %llu): the check %s\n", rounds, round_seed, what);
            print_tail(out);
            fprintf(stderr, "kill-supervisor: the store and its journal are kept: %s, %s.log, %s.jobs\n", store, store, store);
            return 1;
        }
        /* The check's summary line. */
        FILE *f = fopen(out, "r");
        char line[2048], last[2048] = "";
        while (f && fgets(line, sizeof line, f)) {
            if (strncmp(line, "check ", 6) == 0) snprintf(last, sizeof last, "%s", line);
        }
        if (f) fclose(f);
        printf("round %d (seed %llu): %ld kills, done in %.2f s; %s", rounds, round_seed, round_kills,
               now_seconds() - round_started, last[0] ? last : "(no check line)\n");
        if (!keep) remove_round_files(store);
        if (kills >= kills_wanted) break;
    }

    if (g_faults) printf("kill-supervisor: %ld launches ended by a write the store refused\n", faults);
    if (g_cuts_later) printf("kill-supervisor: %ld kills not cut at once (the cut came after a later kill)\n", uncut);
    printf("kill-supervisor: OK: %ld kills over %d round%s (%ld launches) in %.1f s; every round done and checked\n", kills,
           rounds + 1, rounds ? "s" : "", launches, now_seconds() - started);
    if (!keep) rmdir(g_dir);
    return 0;
}
