/* The generation tests' fixtures (gen_fixtures.h). */
#include "gen_fixtures.h"
#include "check.h"

ib__gen *gen_fixture_open(const ib__gen_fake_script *s)
{
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = "fake-model";
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ib__gen_open_fake_script(s, &a, &g, &err) == IB_OK);
    return g;
}

ib_gen_config gen_fixture_config(int32_t p, int32_t n)
{
    ib_gen_config c;
    ib_gen_config_init(&c);
    c.prompt_tokens = p;
    c.new_tokens = n;
    c.run.runs = 10;
    c.run.warmup_runs = 3;
    c.run.warmup_ms = 0;
    c.run.warmup_until_steady = false;
    return c;
}
