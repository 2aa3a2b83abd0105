/* ONNX Runtime loaded at run time (ort_library.c): a library that cannot be
 * loaded fails the model's open with the loader's reason, every time; the
 * environment then lacks ONNX Runtime's facts and says nothing else; the
 * library's path cannot change once a load was tried. (The default library
 * loads in every other test that opens a model.) */
#include "check.h"
#include "env/env.h"
#include "inferbench_backend.h"

#include <stdlib.h>
#include <string.h>

static void test_missing_library(void)
{
    ib_error err;
    const ib_backend *ort = ib_backend_find("onnxruntime");
    CHECK_EQ_INT(ib_backend_configure(ort, "library", "/nonexistent/libonnxruntime.so.1", &err), IB_OK);
    /* Only a process option is configured. */
    CHECK_EQ_INT(ib_backend_configure(ort, "threads", "2", &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "'threads' is not an option of the whole process") != NULL);
    ib_model_options o;
    ib_model_options_init(&o);
    o.device = IB_DEVICE_CPU;
    for (int i = 0; i < 2; i++) { /* the outcome is kept: the same answer twice */
        ib_workload *w = (ib_workload *)&o;
        CHECK_EQ_INT(ib_workload_open_model("zoo:mlp", &o, &w, &err), IB_ERR_UNSUPPORTED);
        CHECK(w == NULL);
        CHECK(!strcmp(err.message, "cannot load the ONNX Runtime library: /nonexistent/libonnxruntime.so.1: "
                                   "cannot open shared object file: No such file or directory"));
    }
    /* The backend has runtime facts to report, empty: nothing loads. */
    ib_runtime_info rt;
    memset(&rt, 'x', sizeof rt); /* reset by the hook */
    CHECK(ib_backend_runtime(ort, &rt));
    CHECK(!strcmp(rt.name, "onnxruntime"));
    CHECK(rt.version[0] == '\0' && rt.library[0] == '\0' && rt.build[0] == '\0' && rt.provider[0] == '\0');

    CHECK_EQ_INT(ib_backend_configure(ort, "library", "", &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "tried already") != NULL);
    /* The same path again is no change: taken. */
    CHECK_EQ_INT(ib_backend_configure(ort, "library", "/nonexistent/libonnxruntime.so.1", &err), IB_OK);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_missing_library);
    return check_summary("test_ort_library");
}
