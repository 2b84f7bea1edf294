/* Early aggregation: each preset is aggregated when it ends and its samples
 * are released, so the parser holds one preset's samples instead of the
 * stream's, and (in the background) the aggregation of a finished preset
 * overlaps the parse of the next one.
 *
 * The worker is one thread with a FIFO of jobs. A job holds a copy of the
 * preset's struct (the parser's array of presets may move while the job
 * runs); the buffers the copy points to are not touched by the parser until
 * the parser has waited for the worker (see hpx_parser.h). A worker that cannot be
 * started, or a job that cannot be allocated, falls back to sealing inline:
 * the result is the same, only not overlapped.
 *
 * With a spill (ergon_hpx_parser_spill) the same worker also writes each
 * tile of ended iterations to the store (spill.c), in the FIFO's order, so
 * a preset's tiles are written before it is sealed. While TILES_QUEUED
 * jobs are queued the parser writes its tiles itself: memory holds a
 * bounded number of tiles however far the worker falls behind.
 */
#include "hpx_parser.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Jobs queued before the parser writes its tiles itself (each holds up to 64
 * iterations' samples: ~0.8 MiB for 400 layers x 4 counters). */
#define TILES_QUEUED 8

struct hpx_job {
	struct hpx_preset copy;
	struct hpx_sealed *out; /* the preset's `sealed`, allocated by the parser */
	struct hpx_tile *tile;	/* a tile job when set (copy and out unused) */
	struct hpx_job *next;
};

struct hpx_worker {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct hpx_job *head, *tail;
	size_t pending; /* queued or running */
	size_t stolen;	/* tile jobs a waiting caller took and still writes */
	bool stop;
	int method;
	struct hpx_spill *spill; /* the parser's, NULL without */
	/* The seal the worker runs, while a waiting thread may help with it
	 * (seal_wait); helpers: threads in hpx_seal_help. */
	struct hpx_agg_shared *help;
	size_t helpers;
};

static void help_publish(void *ctx, struct hpx_agg_shared *sh)
{
	struct hpx_worker *w = ctx;
	pthread_mutex_lock(&w->mu);
	w->help = sh;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void help_retract(void *ctx, struct hpx_agg_shared *sh)
{
	struct hpx_worker *w = ctx;
	(void)sh;
	pthread_mutex_lock(&w->mu);
	w->help = NULL;
	while (w->helpers)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

static void *worker_main(void *arg)
{
	struct hpx_worker *w = arg;
	const struct hpx_help_hook hook = {
	    .publish = help_publish, .retract = help_retract, .ctx = w};
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		struct hpx_job *j = w->head;
		if (!j)
			break;
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		/* A seal reads its preset's tiles: the ones a waiting caller
		 * took from the queue (seal_wait) must be written first. */
		while (!j->tile && w->stolen)
			pthread_cond_wait(&w->cv, &w->mu);
		pthread_mutex_unlock(&w->mu);
		if (j->tile)
			hpx_tile_write(w->spill, &w->spill->tbuf_worker, j->tile);
		else
			hpx_seal_compute(&j->copy, w->method, w->spill, j->out, &hook);
		pthread_mutex_lock(&w->mu);
		free(j);
		w->pending--;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void seal_wait(struct ergon_hpx_parser *p);

static void job_push(struct hpx_worker *w, struct hpx_job *j)
{
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	w->pending++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void preset_seal(struct ergon_hpx_parser *p, struct hpx_preset *ps)
{
	if (!p->early_method || ps->sealed || ps->niters == 0)
		return;
	/* The record is allocated here, so its address is fixed while the
	 * worker fills it (the preset itself may move: presets live in an
	 * array that grows). Without a record the preset keeps its samples and
	 * is aggregated with the result, as without early aggregation. */
	struct hpx_sealed *s = hpx_sealed_new();
	if (!s)
		return;
	ps->sealed = s;
	struct hpx_worker *w = p->worker;
	struct hpx_job *j = w ? malloc(sizeof(*j)) : NULL;
	if (!j) {
		/* Its tiles may still be queued. */
		seal_wait(p);
		hpx_seal_compute(ps, p->early_method, p->spilling ? &p->spill : NULL, s, NULL);
		return;
	}
	j->copy = *ps;
	j->out = s;
	j->tile = NULL;
	j->next = NULL;
	job_push(w, j);
}

/* A tile goes to the worker unless TILES_QUEUED jobs are already queued
 * there (it is behind, typically sealing the previous preset): then the
 * parser writes it itself and parses on, instead of waiting idle. So the
 * tiles in memory stay bounded, and neither core waits on the other. */
static void preset_tile(struct ergon_hpx_parser *p, struct hpx_tile *t)
{
	struct hpx_worker *w = p->worker;
	struct hpx_job *j = NULL;
	if (w) {
		pthread_mutex_lock(&w->mu);
		bool behind = w->pending >= TILES_QUEUED;
		pthread_mutex_unlock(&w->mu);
		j = behind ? NULL : malloc(sizeof(*j));
	}
	if (!j) {
		hpx_tile_write(&p->spill, &p->spill.tbuf_parser, t);
		return;
	}
	j->out = NULL;
	j->tile = t;
	j->next = NULL;
	job_push(w, j);
}

/* The caller has nothing to do until the worker is done: it writes the
 * tiles still queued (with its own transposition buffer), and takes a
 * share of the layers of the seal the worker runs (after the log's end,
 * the last preset's tiles and aggregation are all that is left, and they
 * are on two cores). */
static void seal_wait(struct ergon_hpx_parser *p)
{
	struct hpx_worker *w = p->worker;
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	while (w->pending) {
		struct hpx_agg_shared *sh = w->help;
		if (sh) {
			/* Once: the helper's share is made in one go. */
			w->help = NULL;
			w->helpers++;
			pthread_mutex_unlock(&w->mu);
			hpx_seal_help(sh);
			pthread_mutex_lock(&w->mu);
			w->helpers--;
			pthread_cond_broadcast(&w->cv);
			continue;
		}
		struct hpx_job *j = w->head;
		if (j && j->tile) {
			w->head = j->next;
			if (!w->head)
				w->tail = NULL;
			w->stolen++;
			pthread_mutex_unlock(&w->mu);
			hpx_tile_write(&p->spill, &p->spill.tbuf_parser, j->tile);
			free(j);
			pthread_mutex_lock(&w->mu);
			w->stolen--;
			w->pending--;
			pthread_cond_broadcast(&w->cv);
			continue;
		}
		pthread_cond_wait(&w->cv, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
}

static void worker_stop(struct ergon_hpx_parser *p)
{
	struct hpx_worker *w = p->worker;
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	p->worker = NULL;
}

static const struct hpx_early_ops early_ops = {
    .seal = preset_seal,
    .tile = preset_tile,
    .wait = seal_wait,
    .stop = worker_stop,
    .sealed_free = hpx_sealed_free,
};

int ergon_hpx_parser_aggregate_early(struct ergon_hpx_parser *p, int method, bool background,
				     struct ergon_err *err)
{
	if (method != ERGON_HPX_AGG_MEDIAN && method != ERGON_HPX_AGG_MEAN &&
	    method != ERGON_HPX_AGG_TRIMMED)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "hpx: unknown aggregation %d; use median, mean or trimmed",
				     method);
	if (p->bytes || p->early_method)
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "hpx: early aggregation is chosen once, before the first feed");
	p->early_method = method;
	p->early = &early_ops;
	if (!background)
		return 0;
	struct hpx_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return 0; /* inline sealing: same result */
	w->method = method;
	if (pthread_mutex_init(&w->mu, NULL) != 0) {
		free(w);
		return 0;
	}
	if (pthread_cond_init(&w->cv, NULL) != 0) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return 0;
	}
	if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return 0;
	}
	p->worker = w;
	return 0;
}

int ergon_hpx_parser_spill(struct ergon_hpx_parser *p, const struct ergon_hpx_spill *spill,
			   struct ergon_err *err)
{
	if (!p->early_method || p->bytes || p->spilling)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "hpx: a spill is set once, after early aggregation was "
				     "chosen and before the first feed");
	if (spill == NULL || spill->write == NULL || spill->read == NULL)
		return ergon_err_set(err, ERGON_EUSAGE, "hpx: a spill needs write and read");
	if (pthread_mutex_init(&p->spill.mu, NULL) != 0)
		return ergon_err_set(err, ERGON_ENOMEM, "hpx: cannot make the spill's lock");
	p->spill.io = *spill;
	p->spilling = true;
	if (p->worker)
		p->worker->spill = &p->spill;
	return 0;
}
