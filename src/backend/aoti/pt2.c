/* The model folder of a .pt2 package, unpacked. A .pt2 is a zip archive
 * (PyTorch's PyTorchFileWriter) whose entries are stored, not compressed;
 * AOTInductor's compiled model lives in
 * "<archive>/data/aotinductor/<model>/": its shared library, its weights
 * and kernels beside it. Only what the backend needs is read: the central
 * directory (zip64 too, for packages past 4 GB) and the stored entries of
 * one model folder. A compressed entry is refused, never half-read. */
#include "backend/aoti/aoti.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODEL_FOLDER "data/aotinductor/"
#define EOCD_SIG 0x06054b50u
#define ZIP64_LOCATOR_SIG 0x07064b50u
#define ZIP64_EOCD_SIG 0x06064b50u
#define CENTRAL_SIG 0x02014b50u
#define LOCAL_SIG 0x04034b50u
#define MAX_CENTRAL_BYTES (64u << 20) /* a directory of about a million entries */

typedef struct zip_entry {
    const char *name; /* into the central directory buffer, name_len bytes */
    size_t name_len;
    unsigned method;
    uint64_t size, compressed, local_offset;
} zip_entry;

typedef struct zip {
    FILE *f;
    const char *path;
    uint8_t *central;
    uint64_t central_size, entries;
} zip;

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static ib_status read_at(const zip *z, uint64_t offset, void *buf, size_t len, ib_error *err)
{
    IB_FAIL_IF(fseeko(z->f, (off_t)offset, SEEK_SET) != 0 || fread(buf, 1, len, z->f) != len, err,
               IB_ERR_MODEL, "'%s': truncated .pt2 package (a zip entry runs past the end)", z->path);
    return IB_OK;
}

/* The zip64 end of central directory the locator before the classic one
 * points to, when the classic fields are saturated. */
static ib_status read_zip64_end(zip *z, uint64_t eocd_at, uint64_t *offset, ib_error *err)
{
    uint8_t loc[20], end[56];
    IB_FAIL_IF(eocd_at < sizeof loc, err, IB_ERR_MODEL, "'%s': a zip64 package without its locator", z->path);
    IB_TRY(read_at(z, eocd_at - sizeof loc, loc, sizeof loc, err));
    IB_FAIL_IF(le(loc, 4) != ZIP64_LOCATOR_SIG, err, IB_ERR_MODEL,
               "'%s': a zip64 package without its locator", z->path);
    IB_TRY(read_at(z, le(loc + 8, 8), end, sizeof end, err));
    IB_FAIL_IF(le(end, 4) != ZIP64_EOCD_SIG, err, IB_ERR_MODEL, "'%s': a broken zip64 directory", z->path);
    z->entries = le(end + 32, 8);
    z->central_size = le(end + 40, 8);
    *offset = le(end + 48, 8);
    return IB_OK;
}

/* Finds the end of central directory in the last 64 KiB (its comment may
 * take that much) and reads the whole directory. */
static ib_status read_directory(zip *z, ib_error *err)
{
    IB_FAIL_IF(fseeko(z->f, 0, SEEK_END) != 0, err, IB_ERR_IO, "'%s': %s", z->path, strerror(errno));
    uint64_t size = (uint64_t)ftello(z->f);
    size_t tail_len = size < 65557 ? (size_t)size : 65557;
    uint8_t *tail = malloc(tail_len ? tail_len : 1);
    IB_FAIL_IF(!tail, err, IB_ERR_NO_MEMORY, "out of memory");
    ib_status st = read_at(z, size - tail_len, tail, tail_len, err);
    size_t at = tail_len;
    while (st == IB_OK && at >= 22 && le(tail + at - 22, 4) != EOCD_SIG) at--;
    if (st == IB_OK && at < 22)
        st = ib__fail(err, IB_ERR_MODEL, "'%s': not a .pt2 package (no zip directory) nor a shared library",
                      z->path);
    uint64_t eocd_at = size - tail_len + at - 22, offset = 0;
    if (st == IB_OK) {
        const uint8_t *e = tail + at - 22;
        z->entries = le(e + 10, 2);
        z->central_size = le(e + 12, 4);
        offset = le(e + 16, 4);
        if (z->entries == 0xffff || z->central_size == 0xffffffffu || offset == 0xffffffffu)
            st = read_zip64_end(z, eocd_at, &offset, err);
    }
    free(tail);
    IB_TRY(st);
    IB_FAIL_IF(z->central_size > MAX_CENTRAL_BYTES || offset > size || z->central_size > size - offset, err,
               IB_ERR_MODEL, "'%s': a zip directory of %llu bytes at %llu does not fit the file", z->path,
               (unsigned long long)z->central_size, (unsigned long long)offset);
    z->central = malloc(z->central_size ? z->central_size : 1);
    IB_FAIL_IF(!z->central, err, IB_ERR_NO_MEMORY, "out of memory");
    return read_at(z, offset, z->central, z->central_size, err);
}

/* The zip64 extra field's sizes and offset, where the classic ones are
 * saturated (they appear in this order, each only when saturated). */
static void zip64_extra(const uint8_t *extra, size_t len, zip_entry *e)
{
    for (size_t at = 0; at + 4 <= len;) {
        size_t id = le(extra + at, 2), n = le(extra + at + 2, 2);
        if (at + 4 + n > len) return;
        if (id == 1) {
            const uint8_t *v = extra + at + 4, *end = v + n;
            if (e->size == 0xffffffffu && v + 8 <= end) e->size = le(v, 8), v += 8;
            if (e->compressed == 0xffffffffu && v + 8 <= end) e->compressed = le(v, 8), v += 8;
            if (e->local_offset == 0xffffffffu && v + 8 <= end) e->local_offset = le(v, 8);
            return;
        }
        at += 4 + n;
    }
}

/* The entry at *at of the directory; *at moves past it. */
static ib_status next_entry(const zip *z, size_t *at, zip_entry *e, ib_error *err)
{
    const uint8_t *c = z->central + *at;
    IB_FAIL_IF(*at + 46 > z->central_size || le(c, 4) != CENTRAL_SIG, err, IB_ERR_MODEL,
               "'%s': a broken zip directory", z->path);
    size_t name_len = le(c + 28, 2), extra_len = le(c + 30, 2), comment_len = le(c + 32, 2);
    IB_FAIL_IF(*at + 46 + name_len + extra_len + comment_len > z->central_size, err, IB_ERR_MODEL,
               "'%s': a broken zip directory", z->path);
    *e = (zip_entry){
        .name = (const char *)c + 46,
        .name_len = name_len,
        .method = (unsigned)le(c + 10, 2),
        .compressed = le(c + 20, 4),
        .size = le(c + 24, 4),
        .local_offset = le(c + 42, 4),
    };
    zip64_extra(c + 46 + name_len, extra_len, e);
    *at += 46 + name_len + extra_len + comment_len;
    return IB_OK;
}

/* Where the entry's model folder name starts ("<model>/file"), or NULL
 * when the entry is not in data/aotinductor/. */
static const char *model_part(const zip_entry *e, size_t *len)
{
    for (size_t i = 0; i + sizeof MODEL_FOLDER - 1 <= e->name_len; i++) {
        if ((i == 0 || e->name[i - 1] == '/') &&
            !memcmp(e->name + i, MODEL_FOLDER, sizeof MODEL_FOLDER - 1)) {
            *len = e->name_len - i - (sizeof MODEL_FOLDER - 1);
            return e->name + i + sizeof MODEL_FOLDER - 1;
        }
    }
    return NULL;
}

/* Whether the path relative to the model folder stays inside it: no
 * empty, "." or ".." component, no leading '/'. */
static bool safe_relative(const char *p, size_t len)
{
    for (size_t start = 0; start <= len;) {
        const char *slash = memchr(p + start, '/', len - start);
        size_t n = slash ? (size_t)(slash - (p + start)) : len - start;
        if (n == 0 || (n == 1 && p[start] == '.') || (n == 2 && !memcmp(p + start, "..", 2))) return false;
        start += n + 1;
    }
    return true;
}

/* The model's name of entry e (up to the next '/'), and its path in the
 * model folder (files of subfolders too, as PyTorch's own loader takes). */
static bool split_model_entry(const zip_entry *e, char *model, size_t model_cap, char *file, size_t file_cap)
{
    size_t len;
    const char *p = model_part(e, &len);
    const char *slash = p ? memchr(p, '/', len) : NULL;
    if (!slash || slash == p || (size_t)(slash - p) >= model_cap) return false;
    size_t file_len = len - (size_t)(slash - p) - 1;
    if (!file_len || file_len >= file_cap || slash[file_len] == '/' || !safe_relative(slash + 1, file_len))
        return false;
    memcpy(model, p, (size_t)(slash - p));
    model[slash - p] = '\0';
    memcpy(file, slash + 1, file_len);
    file[file_len] = '\0';
    return true;
}

/* The model folder to unpack: the one asked for, else the only one. */
static ib_status pick_model(const zip *z, const char *wanted, char *model, size_t cap, ib_error *err)
{
    char names[512] = "";
    size_t count = 0;
    zip_entry e;
    char m[128], file[256];
    for (size_t at = 0, i = 0; i < z->entries; i++) {
        IB_TRY(next_entry(z, &at, &e, err));
        if (!split_model_entry(&e, m, sizeof m, file, sizeof file)) continue;
        if (wanted && !strcmp(wanted, m)) return ib__strlcpy(model, m, cap), IB_OK;
        char quoted[140];
        snprintf(quoted, sizeof quoted, "'%s'", m);
        if (strstr(names, quoted)) continue;
        if (count++) strncat(names, ", ", sizeof names - strlen(names) - 1);
        strncat(names, quoted, sizeof names - strlen(names) - 1);
        ib__strlcpy(model, m, cap);
    }
    IB_FAIL_IF(count == 0, err, IB_ERR_MODEL, "'%s': a zip archive without an AOTInductor model (no %s)",
               z->path, MODEL_FOLDER);
    IB_FAIL_IF(wanted, err, IB_ERR_INVALID_ARG, "'%s' has no model '%s' (it has %s)", z->path, wanted, names);
    IB_FAIL_IF(count > 1, err, IB_ERR_INVALID_ARG,
               "'%s' holds models %s: choose one with --option model=NAME", z->path, names);
    return IB_OK;
}

/* Copies a stored entry's bytes to path. */
static ib_status copy_entry(const zip *z, const zip_entry *e, const char *path, ib_error *err)
{
    uint8_t local[30];
    IB_TRY(read_at(z, e->local_offset, local, sizeof local, err));
    IB_FAIL_IF(le(local, 4) != LOCAL_SIG, err, IB_ERR_MODEL, "'%s': a broken zip entry '%.*s'", z->path,
               (int)e->name_len, e->name);
    uint64_t data = e->local_offset + 30 + le(local + 26, 2) + le(local + 28, 2);
    FILE *out = fopen(path, "wb");
    IB_FAIL_IF(!out, err, IB_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    ib_status st = fseeko(z->f, (off_t)data, SEEK_SET) == 0 ? IB_OK : IB_ERR_MODEL;
    char buf[1 << 16];
    for (uint64_t left = e->size; st == IB_OK && left > 0;) {
        size_t n = left < sizeof buf ? (size_t)left : sizeof buf;
        if (fread(buf, 1, n, z->f) != n)
            st = IB_ERR_MODEL;
        else if (fwrite(buf, 1, n, out) != n)
            st = IB_ERR_IO;
        left -= n;
    }
    if (fclose(out) != 0 && st == IB_OK) st = IB_ERR_IO;
    if (st == IB_ERR_MODEL)
        return ib__fail(err, st, "'%s': truncated .pt2 package ('%.*s' runs past the end)", z->path,
                        (int)e->name_len, e->name);
    IB_FAIL_IF(st != IB_OK, err, st, "cannot write '%s': %s", path, strerror(errno));
    return IB_OK;
}

/* Records path as written (before it is: a half-written file is removed
 * too). */
static ib_status note_written(const zip *z, ib__aoti_unpacked *u, const char *path, ib_error *err)
{
    if (u->n_files == u->cap_files) {
        size_t cap = u->cap_files ? 2 * u->cap_files : 32;
        char **grown = realloc(u->files, cap * sizeof *grown);
        IB_FAIL_IF(!grown, err, IB_ERR_NO_MEMORY, "'%s': no memory for the list of unpacked files", z->path);
        u->files = grown;
        u->cap_files = cap;
    }
    u->files[u->n_files] = strdup(path);
    IB_FAIL_IF(!u->files[u->n_files], err, IB_ERR_NO_MEMORY, "'%s': no memory for the list of unpacked files",
               z->path);
    u->n_files++;
    return IB_OK;
}

/* Makes the subfolders of file (a path in the model folder) that are not
 * there yet. */
static ib_status make_folders(const zip *z, ib__aoti_unpacked *u, const char *file, ib_error *err)
{
    for (const char *slash = strchr(file, '/'); slash; slash = strchr(slash + 1, '/')) {
        char folder[sizeof u->library];
        snprintf(folder, sizeof folder, "%s/%.*s", u->dir, (int)(slash - file), file);
        if (mkdir(folder, 0700) == 0)
            IB_TRY(note_written(z, u, folder, err));
        else
            IB_FAIL_IF(errno != EEXIST, err, IB_ERR_IO, "cannot make '%s': %s", folder, strerror(errno));
    }
    return IB_OK;
}

static ib_status unpack_file(const zip *z, const zip_entry *e, const char *file, ib__aoti_unpacked *u,
                             ib_error *err)
{
    IB_FAIL_IF(
        e->method != 0, err, IB_ERR_MODEL,
        "'%s': entry '%s' is compressed (zip method %u): inferbench reads the stored entries PyTorch's "
        "packager writes; unzip the package and give the model's .so",
        z->path, file, e->method);
    char path[sizeof u->library];
    IB_FAIL_IF(snprintf(path, sizeof path, "%s/%s", u->dir, file) >= (int)sizeof path, err, IB_ERR_MODEL,
               "'%s': entry name '%s' too long", z->path, file);
    IB_TRY(make_folders(z, u, file, err));
    IB_TRY(note_written(z, u, path, err));
    IB_TRY(copy_entry(z, e, path, err));
    size_t len = strlen(file);
    if (len > 3 && !strcmp(file + len - 3, ".so")) {
        IB_FAIL_IF(u->library[0], err, IB_ERR_MODEL, "'%s': two shared libraries in the model folder",
                   z->path);
        ib__strlcpy(u->library, path, sizeof u->library);
    }
    return IB_OK;
}

static ib_status unpack_model(const zip *z, const char *model, ib__aoti_unpacked *u, ib_error *err)
{
    zip_entry e;
    char m[128], file[256];
    for (size_t at = 0, i = 0; i < z->entries; i++) {
        IB_TRY(next_entry(z, &at, &e, err));
        if (split_model_entry(&e, m, sizeof m, file, sizeof file) && !strcmp(m, model))
            IB_TRY(unpack_file(z, &e, file, u, err));
    }
    IB_FAIL_IF(!u->library[0], err, IB_ERR_MODEL, "'%s': the model folder '%s' has no shared library (.so)",
               z->path, model);
    return IB_OK;
}

void ib__aoti_unpacked_remove(ib__aoti_unpacked *u)
{
    /* In reverse: a folder's files before the folder. */
    while (u->n_files > 0) {
        char *path = u->files[--u->n_files];
        if (unlink(path) != 0) rmdir(path);
        free(path);
    }
    free(u->files);
    if (u->dir[0]) rmdir(u->dir);
    *u = (ib__aoti_unpacked){ 0 };
}

ib_status ib__aoti_unpack(const char *path, const char *model, const char *parent, ib__aoti_unpacked *u,
                          ib_error *err)
{
    *u = (ib__aoti_unpacked){ 0 };
    zip z = { .path = path, .f = fopen(path, "rb") };
    IB_FAIL_IF(!z.f, err, IB_ERR_MODEL, "'%s': %s", path, strerror(errno));
    ib_status st = read_directory(&z, err);
    char name[128];
    if (st == IB_OK) st = pick_model(&z, model, name, sizeof name, err);
    if (st == IB_OK &&
        snprintf(u->dir, sizeof u->dir, "%s/inferbench-aoti-XXXXXX", parent) >= (int)sizeof u->dir)
        st = ib__fail(err, IB_ERR_INVALID_ARG, "extract_dir '%s': too long", parent);
    if (st == IB_OK && !mkdtemp(u->dir)) {
        st = ib__fail(err, IB_ERR_IO, "cannot make a folder in '%s': %s", parent, strerror(errno));
        u->dir[0] = '\0';
    }
    if (st == IB_OK) st = unpack_model(&z, name, u, err);
    fclose(z.f);
    free(z.central);
    if (st != IB_OK) ib__aoti_unpacked_remove(u);
    return st;
}
