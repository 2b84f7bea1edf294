/* Fuzz the reader of the kernel firmware's UART lines
 * (ergon_kernels_qemu_parse) on three small cases (conv, dwconv, fc), both
 * implementations expected, and the statistics behind it. Properties: a
 * refusal says why (a message); the statistics are a pure function of
 * what was read (a second summary is the same JSON). */
#include "engines/kernels/kernels_internal.h"
#include "fuzz_props.h"
#include "pipelines/kernels/kernels_qemu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int8_t expect[3][8] = {{1, 2, 3, 4, 5, 6, 7, 8}, {0}, {-1, -2}};
	struct kcase cases[3];
	memset(cases, 0, sizeof cases);
	static const int kinds[3] = {KC_CONV, KC_DWCONV, KC_FC};
	for (int i = 0; i < 3; i++) {
		snprintf(cases[i].name, sizeof cases[i].name, "c%d", i);
		cases[i].kind = kinds[i];
		cases[i].expect = expect[i];
		cases[i].out_len = 8;
		cases[i].record = json_object();
	}
	struct ergon_kernels_data *d = NULL;
	struct ergon_err err = {0};
	if (ergon_kernels_data_new(&d, &err) == 0) {
		struct ergon_dynbuf samples;
		ergon_dynbuf_init(&samples, 1u << 20);
		struct kq_firmware fw;
		if (ergon_kernels_qemu_parse("fuzz.log", (const char *)data, size, cases, 3,
					     KQ_IMPL_REF | KQ_IMPL_MVE, d, &samples, &fw,
					     &err) == 0) {
			json_t *sec = NULL, *again = NULL;
			struct ergon_err e2 = {0};
			if (ergon_kernels_summarize(d, "ref", "emulated_instructions", &sec,
						    &err) == 0) {
				FUZZ_REQUIRE(ergon_kernels_summarize(d, "ref",
								     "emulated_instructions",
								     &again, &e2) == 0);
				FUZZ_REQUIRE(json_equal(sec, again));
				json_decref(again);
				json_decref(sec);
			} else {
				FUZZ_REQUIRE(err.msg[0] != '\0');
			}
		} else {
			FUZZ_REQUIRE(err.msg[0] != '\0');
		}
		ergon_dynbuf_free(&samples);
		ergon_kernels_data_free(d);
	}
	for (int i = 0; i < 3; i++)
		json_decref(cases[i].record);
	return 0;
}
