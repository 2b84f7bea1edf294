/* build/sanitizers: says whether this test build is the sanitized one the
 * suite is meant to run under (ASan + UBSan, -DERGON_SANITIZE=ON, as
 * scripts/test.sh builds it). Exit 0 when AddressSanitizer is compiled in;
 * exit 77 (ctest SKIP_RETURN_CODE: "did not run") with a message when not,
 * so a default `ctest` in a plain build reports that its tests ran without
 * sanitizers instead of passing as if they had. */
#include <stdio.h>

#if defined(__SANITIZE_ADDRESS__)
#define ERGON_PROBE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ERGON_PROBE_ASAN 1
#endif
#endif

int main(void)
{
#ifdef ERGON_PROBE_ASAN
	puts("this test build is sanitized (AddressSanitizer + UndefinedBehaviorSanitizer)");
	return 0;
#else
	puts("NOT SANITIZED: this test build has no AddressSanitizer/UBSan (ERGON_SANITIZE=OFF); "
	     "its tests ran without them. Use scripts/test.sh or configure with "
	     "-DERGON_SANITIZE=ON.");
	return 77;
#endif
}
