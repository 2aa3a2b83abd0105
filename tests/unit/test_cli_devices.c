/* The devices named in the program's refusals (cli/devices.c, issue 28):
 * a --device-id that names no device says which devices there are, and a
 * CUDA-only option on a model on the CPU says why it runs there, from a
 * scripted list of device names (no GPU needed). */
#include "check.h"
#include "cli.h"

#include <string.h>

typedef char device_name[IB_DEVICE_NAME_LEN];

static const device_name one[] = { "NVIDIA H200" };
static const device_name two[] = { "NVIDIA H200", "NVIDIA A100-SXM4-80GB" };

static void check_text(const char *got, const char *want)
{
    CHECK(!strcmp(got, want));
    if (strcmp(got, want)) fprintf(stderr, "  got:  %s\n  want: %s\n", got, want);
}

static void test_describe(void)
{
    char buf[CLI_DEVICES_TEXT];
    cli_describe_devices(buf, sizeof buf, NULL, 0);
    check_text(buf, "none");
    cli_describe_devices(buf, sizeof buf, one, 1);
    check_text(buf, "1 (0: NVIDIA H200)");
    cli_describe_devices(buf, sizeof buf, two, 2);
    check_text(buf, "2 (0: NVIDIA H200, 1: NVIDIA A100-SXM4-80GB)");
    char small[12]; /* cut, never overrun */
    cli_describe_devices(small, sizeof small, two, 2);
    CHECK(strlen(small) == sizeof small - 1);
}

static void test_device_id(void)
{
    char buf[CLI_DEVICES_TEXT + 64] = "";
    CHECK(!cli_device_id_refusal(buf, sizeof buf, 0, one, 1));
    CHECK(!cli_device_id_refusal(buf, sizeof buf, 1, two, 2));
    CHECK(cli_device_id_refusal(buf, sizeof buf, 7, one, 1));
    check_text(buf, "there is no CUDA device 7: this machine has 1 (0: NVIDIA H200)");
    CHECK(cli_device_id_refusal(buf, sizeof buf, 2, two, 2)); /* one past the last */
    check_text(buf,
               "there is no CUDA device 2: this machine has 2 (0: NVIDIA H200, 1: NVIDIA A100-SXM4-80GB)");
    CHECK(cli_device_id_refusal(buf, sizeof buf, 0, NULL, 0));
    check_text(buf, "there is no CUDA device 0: this machine has none");
    CHECK(cli_device_id_refusal(buf, sizeof buf, 3, NULL, 0));
    check_text(buf, "there is no CUDA device 3: this machine has none");
}

static void test_cpu_reason(void)
{
    char buf[CLI_DEVICES_TEXT + 128];
    cli_cpu_reason(buf, sizeof buf, true, "onnxruntime", one, 1); /* asked for: the list is moot */
    check_text(buf, "the model runs on the CPU");
    cli_cpu_reason(buf, sizeof buf, false, "onnxruntime", NULL, 0);
    check_text(buf, "the model runs on the CPU, as this machine has no CUDA device");
    cli_cpu_reason(buf, sizeof buf, false, "fake", one, 1);
    check_text(
        buf,
        "backend 'fake' runs the model on the CPU, though this machine has CUDA devices: 1 (0: NVIDIA H200)");
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_describe);
    RUN(test_device_id);
    RUN(test_cpu_reason);
    return check_summary("test_cli_devices");
}
