/* Built against an installed prefix with `pkg-config --cflags --libs workflow` (install.pkg_config). */
#include <workflow.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    wf_engine *engine = NULL;
    char *text = NULL;
    if (wf_engine_open_text(&engine, "{\"clock\": {\"mode\": \"manual\", \"start\": \"2026-01-01T00:00:00.000Z\"}}") != WF_OK) {
        printf("wf_engine_open_text failed: %s\n", wf_error_last()->message);
        return 1;
    }
    int status = wf_call_text(&text, engine, "clock.now", NULL);
    int ok = status == WF_OK && text && strcmp(text, "{\"now\":\"2026-01-01T00:00:00.000Z\"}") == 0;
    printf("installed libworkflow %s: clock.now -> %s\n", wf_libversion(), text ? text : "(error)");
    wf_free(text);
    wf_engine_free(engine);
    return ok && wf_libversion_number() == WF_VERSION_NUMBER ? 0 : 1;
}
