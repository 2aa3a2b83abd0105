/* Text from outside (a model path, input names) reaches JSON and HTML as
 * valid UTF-8: the one sanitizer, ib__sbuf_append_utf8, keeps every
 * well-formed character and replaces each other byte by U+FFFD. */
#include "check.h"
#include "report/svg.h"

#include <stdlib.h>
#include <string.h>

#define FFFD "\xEF\xBF\xBD"

/* s sanitized, as a string the caller frees. */
static char *sanitized(const char *s)
{
    ib__sbuf b = { 0 };
    ib__sbuf_append_utf8(&b, s, strlen(s));
    ib__sbuf_printf(&b, "%s", ""); /* an empty input still yields "" */
    return ib__sbuf_finish(&b);
}

#define CHECK_SANITIZED(in, want)                                                                            \
    do {                                                                                                     \
        char *got_ = sanitized(in);                                                                          \
        CHECK(got_ &&strcmp(got_, want) == 0);                                                               \
        if (got_ && strcmp(got_, want)) fprintf(stderr, "  got \"%s\", want \"%s\"\n", got_, want);          \
        free(got_);                                                                                          \
    } while (0)

static void test_well_formed_kept(void)
{
    const char *ok =
        "ascii \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBF \xF4\x8F\xBF\xBF \xED\x9F\xBF";
    CHECK_EQ_INT(ib__utf8_valid_prefix(ok, strlen(ok)), strlen(ok));
    CHECK_SANITIZED(ok, ok);
    CHECK_SANITIZED("", "");
}

static void test_malformed_replaced(void)
{
    CHECK_SANITIZED("m\xFF.onnx", "m" FFFD ".onnx");             /* never in UTF-8 */
    CHECK_SANITIZED("\x80x", FFFD "x");                          /* a lone continuation byte */
    CHECK_SANITIZED("\xC0\xAF", FFFD FFFD);                      /* overlong '/' */
    CHECK_SANITIZED("\xC1\xBF", FFFD FFFD);                      /* overlong */
    CHECK_SANITIZED("\xE0\x80\xAF", FFFD FFFD FFFD);             /* overlong, 3 bytes */
    CHECK_SANITIZED("\xF0\x80\x80\xAF", FFFD FFFD FFFD FFFD);    /* overlong, 4 bytes */
    CHECK_SANITIZED("\xED\xA0\x80", FFFD FFFD FFFD);             /* a surrogate, U+D800 */
    CHECK_SANITIZED("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD);    /* above U+10FFFF */
    CHECK_SANITIZED("\xF5\x80\x80\x80", FFFD FFFD FFFD FFFD);    /* lead byte past F4 */
    CHECK_SANITIZED("a\xE2\x82", "a" FFFD FFFD);                 /* cut short at the end */
    CHECK_SANITIZED("\xE2\x82x\xC3\xA9", FFFD FFFD "x\xC3\xA9"); /* cut short, then valid */
    CHECK_EQ_INT(ib__utf8_valid_prefix("ab\xFF"
                                       "cd",
                                       5),
                 2);
    CHECK_EQ_INT(ib__utf8_valid_prefix("\xC3\xA9", 1), 0); /* the length bounds the sequence */
}

/* The HTML escaper sanitizes what it escapes. */
static void test_xml_escape(void)
{
    ib__sbuf b = { 0 };
    ib__xml_escape(&b, "<m\xFF\xC3(>&\xC3\xA9");
    char *s = ib__sbuf_finish(&b);
    CHECK(s && strcmp(s, "&lt;m" FFFD FFFD "(&gt;&amp;\xC3\xA9") == 0);
    free(s);
}

/* A JSON document reads back with U+FFFD where the bytes were invalid. */
static void test_json_document(void)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", "/tmp/m\xFF\xFE.onnx");
    cJSON_AddStringToObject(root, "name", "\xC3\xA9t\xC3\xA9");
    char *doc = ib__json_finish(root);
    CHECK(doc != NULL);
    if (!doc) return;
    CHECK_EQ_INT(ib__utf8_valid_prefix(doc, strlen(doc)), strlen(doc));
    cJSON *back = cJSON_Parse(doc);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(back, "model");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(back, "name");
    CHECK(cJSON_IsString(model) && strcmp(model->valuestring, "/tmp/m" FFFD FFFD ".onnx") == 0);
    CHECK(cJSON_IsString(name) && strcmp(name->valuestring, "\xC3\xA9t\xC3\xA9") == 0);
    cJSON_Delete(back);
    free(doc);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_well_formed_kept);
    RUN(test_malformed_replaced);
    RUN(test_xml_escape);
    RUN(test_json_document);
    return check_summary("test_utf8");
}
