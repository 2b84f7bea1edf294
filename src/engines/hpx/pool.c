/* Recycled iteration buffers (struct hpx_pool, hpx_parser.h): a LIFO of
 * pairs under a lock, filled by the spill job (spill.c, on the worker's
 * thread) and hpx_tiles_take, drained by the parser (parser.c). Its own
 * file, so that neither of those calls into the other for it. */
#include "hpx_parser.h"

#include <stdlib.h>

bool hpx_pool_put(struct hpx_pool *pl, void *a, size_t a_bytes, void *b, size_t b_bytes)
{
	if (pl == NULL || !pl->ready || a == NULL || b == NULL)
		return false;
	pthread_mutex_lock(&pl->mu);
	bool kept = !pl->closed && pl->n < HPX_POOL_MAX;
	if (kept)
		pl->pair[pl->n++] = (struct hpx_pool_pair){a, b, a_bytes, b_bytes};
	pthread_mutex_unlock(&pl->mu);
	return kept;
}

/* The pair put last, or false when the pool is empty. */
bool hpx_pool_take(struct hpx_pool *pl, struct hpx_pool_pair *out)
{
	if (!pl->ready)
		return false;
	pthread_mutex_lock(&pl->mu);
	bool have = pl->n > 0;
	if (have)
		*out = pl->pair[--pl->n];
	pthread_mutex_unlock(&pl->mu);
	return have;
}

void hpx_pool_init(struct hpx_pool *pl)
{
	pl->n = 0;
	pl->ready = pthread_mutex_init(&pl->mu, NULL) == 0;
}

/* Free what the pool holds and keep nothing more (the worker may still
 * hand pairs back: hpx_pool_put refuses them, the caller frees them). */
void hpx_pool_close(struct hpx_pool *pl)
{
	if (!pl->ready)
		return;
	pthread_mutex_lock(&pl->mu);
	pl->closed = true;
	for (size_t i = 0; i < pl->n; i++) {
		free(pl->pair[i].a);
		free(pl->pair[i].b);
	}
	pl->n = 0;
	pthread_mutex_unlock(&pl->mu);
}

/* After the worker has stopped: nothing is put any more. */
void hpx_pool_free(struct hpx_pool *pl)
{
	if (!pl->ready)
		return;
	hpx_pool_close(pl);
	pthread_mutex_destroy(&pl->mu);
	pl->ready = false;
}
