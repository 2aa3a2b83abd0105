/* Replays fuzz corpora without libFuzzer (zstd's regression_driver.c):
 * runs LLVMFuzzerTestOneInput over every file of the directories (or the
 * files) named on the command line, in name order. Built with the normal
 * compiler in every test build, so the corpora and every finding added to
 * them run in `make test`, under the sanitizers too.
 *
 *   fuzz_shape_replay tests/fuzz/corpus/fuzz_shape [more dirs or files]
 *
 * Exit 0 when every input ran (a finding crashes or aborts before), 1 when
 * a path could not be read or nothing was replayed. */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static int read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return -1;
    }
    *data = buf;
    *size = n;
    return 0;
}

static int replay_file(const char *path, size_t *count)
{
    uint8_t *data;
    size_t size;
    if (read_file(path, &data, &size) != 0) {
        fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    /* An exact-size copy: a read past the input's end is an ASan finding,
     * as under libFuzzer. */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return -1;
    }
    if (size) memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    (*count)++;
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int skip_entry(const struct dirent *e) { return e->d_name[0] != '.'; }

static int replay_dir(const char *dir, size_t *count)
{
    struct dirent **names;
    int n = scandir(dir, &names, skip_entry, by_name);
    if (n < 0) {
        fprintf(stderr, "replay: cannot list '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]->d_name) + 2;
        char *path = malloc(len);
        if (path) {
            snprintf(path, len, "%s/%s", dir, names[i]->d_name);
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && replay_file(path, count) != 0) rc = -1;
        } else {
            rc = -1;
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 1;
    }
    size_t count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: '%s': %s\n", argv[i], strerror(errno));
            rc = 1;
        } else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) : replay_file(argv[i], &count)) {
            rc = 1;
        }
    }
    fprintf(stderr, "replay: %zu inputs ran\n", count);
    return rc != 0 || count == 0 ? 1 : rc;
}
