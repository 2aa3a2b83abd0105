/* A build without libmicrohttpd: the scripted server is not there, and
 * says so in one line (the script itself is still checked first, so a bad
 * one reads the same in every build). */
#include "endpoint/script_server.h"

#include <stddef.h>

ib_status ib_script_server_start(const ib_script *s, ib_script_server **out, ib_error *err)
{
    *out = NULL;
    IB_TRY(ib__script_check(s, err));
    return ib__fail(err, IB_ERR_UNSUPPORTED,
                    "script server: built without libmicrohttpd (install libmicrohttpd-dev and rebuild)");
}

int ib_script_server_port(const ib_script_server *srv)
{
    (void)srv;
    return -1;
}

void ib_script_server_stop(ib_script_server *srv) { (void)srv; }

size_t ib_script_server_stamps(ib_script_server *srv, ib_script_stamp *out, size_t cap)
{
    (void)srv, (void)out, (void)cap;
    return 0;
}
