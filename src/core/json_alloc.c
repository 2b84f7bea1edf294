/* Allocation-failure watch for jansson (see include/ergon/json_alloc.h).
 * jansson reports most allocation failures by a return value that callers
 * building large documents do not check (json_array_append_new and
 * json_object_set_new on a full heap): a report built across one would
 * silently lack values. Every jansson allocation goes through here, so a
 * pipeline can ask afterwards whether any failed. */
#include "ergon/json_alloc.h"

#include <jansson.h>
#include <stdlib.h>

static unsigned long failures;
static int installed;

static void *watch_malloc(size_t n)
{
	void *p = malloc(n);
	if (p == NULL)
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	return p;
}

void ergon_json_alloc_watch(void)
{
	/* Same free as jansson's default: memory from before stays valid. */
	if (!__atomic_exchange_n(&installed, 1, __ATOMIC_SEQ_CST))
		json_set_alloc_funcs(watch_malloc, free);
}

unsigned long ergon_json_alloc_failures(void)
{
	return __atomic_load_n(&failures, __ATOMIC_RELAXED);
}
