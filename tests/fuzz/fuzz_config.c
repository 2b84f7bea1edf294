/* Fuzz the YAML configuration loader and the rules behind it: a
 * configuration file is input ergon did not produce. Every input must end
 * in 0 or a recorded error, never a crash, a leak or a read past the
 * buffer; an accepted file must resolve or fail cleanly, and its effective
 * values must print and serialise. */
#include "ergon/config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ergon_config cfg;
	struct ergon_err err = {0};
	if (ergon_config_init(&cfg) != 0)
		return 0;
	int rc = ergon_config_load_yaml(&cfg, "fuzz.yml", (const char *)data, size, &err);
	/* An error always carries a message. */
	if (rc != 0 && err.msg[0] == '\0')
		abort();
	if (rc == 0 && ergon_config_resolve(&cfg, &err) == 0) {
		char buf[1100];
		for (size_t i = 0; i < ergon_config_key_count(); i++)
			ergon_config_value_text(&cfg, i, buf, sizeof(buf));
		json_t *j = ergon_config_to_json(&cfg);
		json_decref(j);
	}
	ergon_config_cleanup(&cfg);
	return 0;
}
