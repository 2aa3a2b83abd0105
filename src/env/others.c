/* Other work on the machine during a measurement: the compute processes
 * NVML lists on the GPU, and the CPU time other processes take (the load
 * average, and a /proc/stat sample over the timed runs). A figure measured
 * beside them includes their interference; the reports say so. */
#include "env/env.h"
#include "env/nvml.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* /proc/PID/comm, or "?" when the process is not visible here. */
static bool process_name(unsigned pid, char *name, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    FILE *f = fopen(path, "r");
    bool found = f && fgets(name, (int)cap, f);
    if (f) fclose(f);
    if (!found) ib__strlcpy(name, "?", cap);
    name[strcspn(name, "\n")] = '\0';
    return found;
}

size_t ib__other_processes(const unsigned *pids, const unsigned long long *memory, size_t n, unsigned self,
                           bool self_on_gpu, ib_process_info *out, size_t cap)
{
    bool self_listed = false;
    for (size_t i = 0; i < n; i++) self_listed = self_listed || pids[i] == self;
    /* Not listed under our own pid while holding a context: NVML speaks of
     * another PID namespace, and one of the processes not visible here is
     * this one. */
    bool skip_one_hidden = self_on_gpu && !self_listed;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (pids[i] == self) continue;
        ib_process_info p = { .pid = pids[i], .gpu_memory_bytes = memory[i] };
        if (!process_name(pids[i], p.name, sizeof p.name) && skip_one_hidden) {
            skip_one_hidden = false;
            continue;
        }
        if (m < cap) out[m] = p;
        m++;
    }
    return m;
}

/* The other processes on gpu now, added to env's list (each pid once). */
void ib__env_note_gpu_processes(ib_env *env, const ib__nvml_gpu *gpu)
{
    unsigned pids[IB_MAX_OTHER_PROCESSES * 2];
    unsigned long long memory[IB_MAX_OTHER_PROCESSES * 2];
    int n = ib__nvml_compute_processes(gpu, pids, memory, IB_MAX_OTHER_PROCESSES * 2);
    if (n <= 0) return;
    ib_process_info seen[IB_MAX_OTHER_PROCESSES];
    size_t listed = (size_t)n < IB_MAX_OTHER_PROCESSES * 2 ? (size_t)n : IB_MAX_OTHER_PROCESSES * 2;
    size_t m =
        ib__other_processes(pids, memory, listed, (unsigned)getpid(), true, seen, IB_MAX_OTHER_PROCESSES);
    for (size_t i = 0; i < m && i < IB_MAX_OTHER_PROCESSES; i++) {
        bool known = false;
        for (size_t j = 0; j < env->n_other_gpu_processes && j < IB_MAX_OTHER_PROCESSES; j++)
            known = known || env->other_gpu_processes[j].pid == seen[i].pid;
        if (known) continue;
        if (env->n_other_gpu_processes < IB_MAX_OTHER_PROCESSES)
            env->other_gpu_processes[env->n_other_gpu_processes] = seen[i];
        env->n_other_gpu_processes++;
    }
}

ib_status ib_gpu_other_processes(int device_id, bool self_on_gpu, ib_process_info *out, size_t cap, size_t *n,
                                 ib_error *err)
{
    *n = 0;
    ib__nvml_gpu gpu;
    char note[128];
    IB_FAIL_IF(!ib__nvml_open(&gpu, device_id, note, sizeof note), err, IB_ERR_UNSUPPORTED, "%s", note);
    unsigned pids[IB_MAX_OTHER_PROCESSES * 2];
    unsigned long long memory[IB_MAX_OTHER_PROCESSES * 2];
    int listed = ib__nvml_compute_processes(&gpu, pids, memory, IB_MAX_OTHER_PROCESSES * 2);
    ib__nvml_close(&gpu);
    IB_FAIL_IF(listed < 0, err, IB_ERR_UNSUPPORTED, "NVML does not list the GPU's processes");
    size_t m = (size_t)listed < IB_MAX_OTHER_PROCESSES * 2 ? (size_t)listed : IB_MAX_OTHER_PROCESSES * 2;
    *n = ib__other_processes(pids, memory, m, (unsigned)getpid(), self_on_gpu, out, cap);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* The CPU                                                                   */
/* ------------------------------------------------------------------------ */

/* The machine's busy and total jiffies (/proc/stat's "cpu" line) and this
 * process's (utime + stime of /proc/self/stat), in the same USER_HZ ticks. */
static bool read_ticks(double *busy, double *total, double *self)
{
    unsigned long long v[10] = { 0 };
    FILE *f = fopen("/proc/stat", "r");
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                         &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9])
                : 0;
    if (f) fclose(f);
    if (got < 4) return false;
    /* guest and guest_nice (8, 9) are inside user and nice already. */
    *total = 0;
    for (int i = 0; i < 8 && i < got; i++) *total += (double)v[i];
    *busy = *total - (double)v[3] - (got > 4 ? (double)v[4] : 0); /* idle, iowait */
    unsigned long long utime = 0, stime = 0;
    f = fopen("/proc/self/stat", "r");
    /* comm (field 2) may hold spaces: the fields after its ')' are read. */
    char line[1024];
    bool ok = f && fgets(line, sizeof line, f);
    if (f) fclose(f);
    char *after = ok ? strrchr(line, ')') : NULL;
    if (!after ||
        sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return false;
    *self = (double)(utime + stime);
    return true;
}

void ib__cpu_watch_start(ib__cpu_watch *w, ib_env *env)
{
    env->n_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    env->load_average_1m = NAN;
    env->other_cpu_cores = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    double load;
    if (f && fscanf(f, "%lf", &load) == 1) env->load_average_1m = load;
    if (f) fclose(f);
    w->ok = read_ticks(&w->busy, &w->total, &w->self);
}

unsigned ib__env_threads_warning(ib_env *env, int32_t threads, int32_t cores_allowed, bool cpu_device)
{
    env->threads = threads > 0 ? threads : 0;
    env->n_cpus_allowed = cores_allowed > 0 ? cores_allowed : ib__cpus_allowed();
    return cpu_device && env->threads > env->n_cpus_allowed ? IB_WARN_THREADS_OVER_CORES : 0;
}

double ib__cpu_other_cores(double busy, double total, double self, int n_cpus)
{
    if (!(total > 0) || n_cpus <= 0) return NAN;
    return fmax(0, (busy - self) / total * n_cpus);
}

unsigned ib__cpu_watch_stop(const ib__cpu_watch *w, ib_env *env, bool cpu_device)
{
    double busy, total, self;
    if (!w->ok || !read_ticks(&busy, &total, &self)) return 0;
    env->other_cpu_cores = ib__cpu_other_cores(busy - w->busy, total - w->total, self - w->self, env->n_cpus);
    /* On the CPU, another process taking half a core or more competes with
     * the runs for cores, caches and memory bandwidth. */
    return cpu_device && env->other_cpu_cores >= IB__CPU_BUSY_CORES ? IB_WARN_CPU_BUSY : 0;
}
