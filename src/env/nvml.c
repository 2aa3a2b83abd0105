/* NVML through dlopen. The few types and entry points used are declared
 * here, as nvml.h (CUDA 13, NVML API 13) declares them: enums are passed as
 * int, which is their size and representation in the C ABI. The library is
 * loaded once per process and never unloaded (NVML keeps threads and state
 * across init/shutdown; unloading it under them is not supported). */
#include "env/nvml.h"
#include "base/common.h"
#include "gpu/gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

typedef int nvml_return;                    /* nvmlReturn_t */
typedef struct nvml_device_st *nvml_device; /* nvmlDevice_t */

enum {
    NVML_SUCCESS = 0,
    NVML_FEATURE_ENABLED = 1, /* nvmlEnableState_t */
    NVML_CLOCK_SM = 1,        /* nvmlClockType_t */
    NVML_CLOCK_MEM = 2,
    NVML_TEMPERATURE_GPU = 0, /* nvmlTemperatureSensors_t */
    NVML_MAX_PSTATE = 15,     /* NVML_PSTATE_15; NVML_PSTATE_UNKNOWN is 32 */
    NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80,
};

static struct {
    void *lib;
    /* required */
    nvml_return (*init_v2)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*handle_by_index_v2)(unsigned index, nvml_device *device);
    /* optional: NULL leaves what they read unknown */
    nvml_return (*handle_by_pci_bus_id_v2)(const char *bus_id, nvml_device *device);
    nvml_return (*system_driver_version)(char *version, unsigned length);
    nvml_return (*persistence_mode)(nvml_device device, int *mode);
    nvml_return (*performance_state)(nvml_device device, int *pstate);
    nvml_return (*clock_info)(nvml_device device, int type, unsigned *mhz);
    nvml_return (*max_clock_info)(nvml_device device, int type, unsigned *mhz);
    nvml_return (*temperature)(nvml_device device, int sensor, unsigned *celsius);
    nvml_return (*power_usage)(nvml_device device, unsigned *milliwatts);
    nvml_return (*clocks_event_reasons)(nvml_device device, unsigned long long *reasons);
    nvml_return (*compute_processes)(nvml_device device, unsigned *count, void *infos);
    nvml_return (*uuid)(nvml_device device, char *uuid, unsigned length);
    nvml_return (*total_energy)(nvml_device device, unsigned long long *millijoules);
    nvml_return (*enforced_power_limit)(nvml_device device, unsigned *milliwatts);
} nvml;

/* nvmlProcessInfo_t of the _v2 and _v3 entry points (nvmlProcessInfo_v2_t). */
typedef struct nvml_process_info {
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id, compute_instance_id;
} nvml_process_info;
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_MAX_PROCESSES 64

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

/* dlsym returns an object pointer; POSIX guarantees it converts to the
 * function's pointer type. */
#define LOAD(field, symbol) (*(void **)&nvml.field = dlsym(nvml.lib, symbol))

static void nvml_load(void)
{
    /* The soname first (the loader's search path, as for any library), then
     * where NVIDIA's container toolkit mounts the driver's libraries, which
     * is not always on that path. */
    static const char *const names[] = { "libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1" };
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !nvml.lib; i++)
        nvml.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!nvml.lib) return;
    if (!LOAD(init_v2, "nvmlInit_v2") || !LOAD(shutdown, "nvmlShutdown") ||
        !LOAD(handle_by_index_v2, "nvmlDeviceGetHandleByIndex_v2")) {
        dlclose(nvml.lib);
        nvml.lib = NULL;
        return;
    }
    LOAD(handle_by_pci_bus_id_v2, "nvmlDeviceGetHandleByPciBusId_v2");
    LOAD(system_driver_version, "nvmlSystemGetDriverVersion");
    LOAD(persistence_mode, "nvmlDeviceGetPersistenceMode");
    LOAD(performance_state, "nvmlDeviceGetPerformanceState");
    LOAD(clock_info, "nvmlDeviceGetClockInfo");
    LOAD(max_clock_info, "nvmlDeviceGetMaxClockInfo");
    LOAD(temperature, "nvmlDeviceGetTemperature");
    LOAD(power_usage, "nvmlDeviceGetPowerUsage");
    LOAD(uuid, "nvmlDeviceGetUUID");
    /* Volta and later; older GPUs answer NOT_SUPPORTED. */
    LOAD(total_energy, "nvmlDeviceGetTotalEnergyConsumption");
    LOAD(enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    /* Renamed in NVML 12.2 ("throttle" became "event"), same signature;
     * drivers before that have only the old name. */
    /* _v3 and _v2 take the same struct; _v1's is shorter: not used. */
    if (!LOAD(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3"))
        LOAD(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!LOAD(clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        LOAD(clocks_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
}

static bool find_device(int cuda_device_id, nvml_device *dev, char *note, size_t cap)
{
    char bus_id[32];
    if (nvml.handle_by_pci_bus_id_v2 &&
        ib__gpu_pci_bus_id(cuda_device_id, bus_id, sizeof bus_id, NULL) == IB_OK &&
        nvml.handle_by_pci_bus_id_v2(bus_id, dev) == NVML_SUCCESS)
        return true;
    /* Right when all GPUs are visible to CUDA and CUDA orders them by PCI bus
     * id too (CUDA_DEVICE_ORDER=PCI_BUS_ID); the bus id lookup above only
     * fails in odd set-ups, so this is a best effort. */
    if (cuda_device_id >= 0 && nvml.handle_by_index_v2((unsigned)cuda_device_id, dev) == NVML_SUCCESS)
        return true;
    snprintf(note, cap, "NVML has no device for CUDA device %d: GPU clocks and throttling not recorded",
             cuda_device_id);
    return false;
}

bool ib__nvml_open(ib__nvml_gpu *gpu, int cuda_device_id, char *note, size_t cap)
{
    gpu->device = NULL;
    pthread_once(&nvml_once, nvml_load);
    if (!nvml.lib) {
        snprintf(note, cap, "NVML not found (libnvidia-ml.so.1): GPU clocks and throttling not recorded");
        return false;
    }
    nvml_return r = nvml.init_v2();
    if (r != NVML_SUCCESS) {
        snprintf(note, cap,
                 "NVML did not start (nvmlInit_v2 error %d): GPU clocks and throttling not recorded", r);
        return false;
    }
    nvml_device dev;
    if (!find_device(cuda_device_id, &dev, note, cap)) {
        nvml.shutdown();
        return false;
    }
    gpu->device = dev;
    return true;
}

void ib__nvml_close(ib__nvml_gpu *gpu)
{
    if (!gpu->device) return;
    nvml.shutdown();
    gpu->device = NULL;
}

void ib__nvml_sample(const ib__nvml_gpu *gpu, double t_ms, ib_gpu_sample *out)
{
    nvml_device dev = gpu->device;
    *out = (ib_gpu_sample){ .t_ms = t_ms, .pstate = -1 };
    int pstate;
    unsigned v;
    unsigned long long reasons;
    if (nvml.performance_state && nvml.performance_state(dev, &pstate) == NVML_SUCCESS && pstate >= 0 &&
        pstate <= NVML_MAX_PSTATE)
        out->pstate = pstate;
    if (nvml.clock_info && nvml.clock_info(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) out->sm_clock_mhz = v;
    if (nvml.clock_info && nvml.clock_info(dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS) out->mem_clock_mhz = v;
    if (nvml.temperature && nvml.temperature(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        out->temperature_c = v;
    if (nvml.power_usage && nvml.power_usage(dev, &v) == NVML_SUCCESS) out->power_w = v / 1000.0;
    if (nvml.clocks_event_reasons && nvml.clocks_event_reasons(dev, &reasons) == NVML_SUCCESS)
        out->throttle_reasons = reasons;
}

void ib__nvml_static(const ib__nvml_gpu *gpu, ib_env *env)
{
    nvml_device dev = gpu->device;
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    int mode;
    unsigned v;
    if (nvml.system_driver_version && nvml.system_driver_version(version, sizeof version) == NVML_SUCCESS)
        ib__strlcpy(env->driver_version, version, sizeof env->driver_version);
    if (nvml.persistence_mode && nvml.persistence_mode(dev, &mode) == NVML_SUCCESS)
        env->persistence_mode = mode == NVML_FEATURE_ENABLED ? 1 : 0;
    if (nvml.max_clock_info && nvml.max_clock_info(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        env->sm_clock_max_mhz = v;
    if (nvml.max_clock_info && nvml.max_clock_info(dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        env->mem_clock_max_mhz = v;
    if (nvml.enforced_power_limit && nvml.enforced_power_limit(dev, &v) == NVML_SUCCESS)
        env->power_limit_w = v / 1000.0;
    char uuid[sizeof env->gpu_uuid];
    if (nvml.uuid && nvml.uuid(dev, uuid, sizeof uuid) == NVML_SUCCESS)
        ib__strlcpy(env->gpu_uuid, uuid, sizeof env->gpu_uuid);
}

int ib__nvml_compute_processes(const ib__nvml_gpu *gpu, unsigned *pids, unsigned long long *memory,
                               size_t cap)
{
    if (!gpu->device || !nvml.compute_processes) return -1;
    nvml_process_info infos[NVML_MAX_PROCESSES];
    unsigned count = NVML_MAX_PROCESSES;
    nvml_return r = nvml.compute_processes(gpu->device, &count, infos);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) return (int)count; /* more than we read: only their number */
    if (r != NVML_SUCCESS) return -1;
    for (unsigned i = 0; i < count && i < cap; i++) {
        pids[i] = infos[i].pid;
        memory[i] = infos[i].used_gpu_memory;
    }
    return (int)count;
}

bool ib__nvml_total_energy_mj(const ib__nvml_gpu *gpu, unsigned long long *millijoules)
{
    return gpu->device && nvml.total_energy &&
           nvml.total_energy((nvml_device)gpu->device, millijoules) == NVML_SUCCESS;
}
