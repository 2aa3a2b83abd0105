/* The aoti backend's parts: the .pt2 package unpacked (pt2.c) and the
 * backend table (aoti.c). */
#ifndef IB_BACKEND_AOTI_H
#define IB_BACKEND_AOTI_H

#include "base/common.h"

/* A package's model folder unpacked into a fresh folder: the files and
 * folders written (removed by ib__aoti_unpacked_remove), as many as the
 * package holds (EfficientNet-B0's has 65 kernels), and the model's
 * shared library among them. */
typedef struct ib__aoti_unpacked {
    char dir[512];
    char **files;
    size_t n_files, cap_files;
    char library[768];
} ib__aoti_unpacked;

/* Unpacks the folder data/aotinductor/<model>/ of the .pt2 package at
 * path (model NULL: the only one) into a new folder under parent. A file
 * that is not a zip archive, an archive without a model, a compressed
 * entry, a truncated file: IB_ERR_MODEL with a one-line message, and
 * nothing left on disk. */
ib_status ib__aoti_unpack(const char *path, const char *model, const char *parent, ib__aoti_unpacked *u,
                          ib_error *err);

/* Removes what ib__aoti_unpack wrote. Accepts an empty one. */
void ib__aoti_unpacked_remove(ib__aoti_unpacked *u);

#endif
