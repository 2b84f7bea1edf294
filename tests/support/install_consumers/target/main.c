/* Uses the runtime's INA228 conversions: VBUS LSB 195.3125 uV (INA228
 * datasheet, 7.6.1.5), so raw 5120 is exactly 1 000 000 uV. */
#include <ergon/ert_ina228_math.h>
#include <stdio.h>

int main(void)
{
	printf("vbus_uv(5120)=%llu\n", (unsigned long long)ert_ina228_vbus_uv(5120));
	return 0;
}
