/* Where the program keeps the zoo's generative models (GGUF files, 3 GB
 * for a 1B model in float16: made once, found again) and which llama.cpp
 * it loads: the environment, read here, never by the library. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool cli_make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        bool made = mkdir(path, 0755) == 0 || errno == EEXIST;
        *p = '/';
        if (!made) return false;
    }
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

bool cli_zoo_cache_dir(char *buf, size_t cap)
{
    const char *own = getenv("INFERBENCH_ZOO_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (own && *own)
        n = snprintf(buf, cap, "%s", own);
    else if (xdg && xdg[0] == '/')
        n = snprintf(buf, cap, "%s/inferbench/zoo", xdg);
    else if (home && home[0] == '/')
        n = snprintf(buf, cap, "%s/.cache/inferbench/zoo", home);
    else
        n = snprintf(buf, cap, "/tmp/inferbench-zoo");
    if (n < 0 || (size_t)n >= cap) return false;
    return cli_make_dirs(buf);
}

const char *cli_llama_library(void)
{
    const char *dir = getenv("INFERBENCH_LLAMA_LIBRARY");
    return dir && *dir ? dir : NULL;
}
