/* Private state of the HPX parser (parser.c stores, aggregate.c reduces). */
#ifndef ERGON_HPX_PARSER_H
#define ERGON_HPX_PARSER_H

#include "hpx_internal.h"

#include <pthread.h>

#define HPX_MAX_NOTED 16
/* Distinct CSV headers kept per preset. */
#define HPX_MAX_HEADERS 256

enum { HPX_COL_NUM = 0, HPX_COL_LAYER, HPX_COL_OP, HPX_COL_TAG, HPX_COL_NAME, HPX_COL_OVERFLOW };

struct hpx_span {
	size_t off;
	size_t len;
};

struct hpx_header {
	char *text; /* the raw header line, then the NUL-separated column names */
	size_t text_len;
	size_t ncols;
	struct hpx_span *names; /* into text */
	uint8_t *kind;		/* HPX_COL_* */
	size_t *slot;		/* numeric slot of each column, SIZE_MAX for string columns */
	size_t nnum;
	long col_layer, col_op, col_tag, col_ovf; /* last column of that name, or -1 */
	/* Layer, then Op (else tag), then only counters, then the overflow
	 * column or nothing: the layout whose rows may take the repeated-
	 * prefix path (parser.c, row_repeat). */
	bool pfx_plan;
};

/* Row r of the previous iteration, when it was a plain row of a pfx_plan
 * header whose Layer and Op cells needed no stripping: its first bytes
 * "Layer,Op," (zero padded), and where those two texts are in the arena.
 * A row of the next iteration that starts with the same bytes has the same
 * two cells, so it shares them without being split there (parser.c). */
#define HPX_PFX_MAX 32
struct hpx_pfx {
	char bytes[HPX_PFX_MAX];
	uint32_t id_off, op_off;
	uint32_t len;  /* 0: none */
	uint64_t iter; /* the iteration (index in the preset) it describes */
};

struct hpx_iter {
	long hdr; /* index into the preset's headers; -1 before the header line */
	size_t nrows, cap;
	size_t cap_hint;  /* rows of the previous iteration */
	double *vals;	  /* nrows x nnum of its header; NaN = a refused cell */
	uint8_t *ovf;	  /* overflow cell was not the integer 0 */
	uint32_t *id_off; /* Layer cell in the preset's string arena, UINT32_MAX if none */
	uint32_t *op_off; /* Op (else tag) cell, UINT32_MAX if none */
	uint64_t lineno;
};

/* Buffers of ended iterations kept for the next ones (pool.c), so that
 * the parser writes its samples into memory it wrote before instead of
 * fresh allocations: a LIFO of pairs (vals and ovf, handed back by the
 * spill job once written, on the worker's thread; or id_off and op_off,
 * released by hpx_tiles_take), under a lock. It holds at most what was in
 * flight at once (up to 9 tiles of 64 iterations), and is emptied and
 * closed when the stream ends (END or finish: the memory then serves the
 * result and the output instead) and freed with the parser. */
#define HPX_POOL_MAX 1024
struct hpx_pool_pair {
	void *a, *b;
	size_t a_bytes, b_bytes;
};
struct hpx_pool {
	pthread_mutex_t mu;
	bool ready;  /* mu initialised */
	bool closed; /* the stream has ended: nothing is kept any more */
	size_t n;
	struct hpx_pool_pair pair[HPX_POOL_MAX];
};
/* pool.c. put: keep a pair (true), or false when the pool is full, closed
 * or NULL, or a or b is NULL (the caller frees them); any thread. take: the
 * pair put last, false when empty. init (ready = false when the lock
 * cannot be made: the pool then keeps nothing); close: free what it holds
 * and keep nothing more; free: close and drop the lock (after the worker
 * has stopped). */
bool hpx_pool_put(struct hpx_pool *pl, void *a, size_t a_bytes, void *b, size_t b_bytes);
bool hpx_pool_take(struct hpx_pool *pl, struct hpx_pool_pair *out);
void hpx_pool_init(struct hpx_pool *pl);
void hpx_pool_close(struct hpx_pool *pl);
void hpx_pool_free(struct hpx_pool *pl);

/* A run of up to HPX_TILE_ITERS ended iterations with one header, whose
 * samples go to the spill (spill.c): in the store, row r, slot s of
 * iteration it0 + t is the value at off + ((r * (nnum + 1) + s) * nt + t)
 * * esize; slot nnum is the row's overflow flag (0 or 1). A tile whose
 * every counter is an integer in [0, 2^31) (the usual one) is narrow: its
 * values are uint32_t (esize 4), a row an iteration does not have is
 * UINT32_MAX. Otherwise they are doubles (esize 8), such a row NaN. The
 * values read back are the very doubles the parser stored, or a NaN where
 * it stored one (every NaN is "no value" to the aggregation). */
#define HPX_TILE_ITERS 64
struct hpx_tile {
	struct hpx_tile *next;
	size_t it0, nt;
	long hdr; /* the iterations' header, -1 for none */
	size_t nnum;
	size_t rows; /* of the longest iteration */
	/* Its range of the store, taken by the writer (bytes: as doubles
	 * until then, halved when narrow). */
	uint64_t off, bytes;
	bool narrow; /* set by the writer */
	/* The samples, owned by the tile until the spill job has written
	 * them (then NULL). */
	double *vals[HPX_TILE_ITERS];
	uint8_t *ovf[HPX_TILE_ITERS];
	size_t nrows[HPX_TILE_ITERS];
	size_t cap[HPX_TILE_ITERS]; /* rows vals and ovf have room for */
	struct hpx_pool *pool;	    /* where the job hands them back (NULL: freed) */
	/* Set by the job: */
	bool any_ovf;
	int rc; /* 0, or the store's error (err) */
	struct ergon_err err;
};

/* The caller's store and its ranges (spill.c): a range is reused once its
 * preset is aggregated (so the store stays about two presets' samples
 * large and its pages are rewritten, not made anew); the lock is taken by
 * the parser's thread (allocation) and the worker (release). */
#define HPX_SPILL_FREE_MAX 1024
struct hpx_range {
	uint64_t off, len;
};
struct hpx_spill {
	struct ergon_hpx_spill io;
	pthread_mutex_t mu;
	uint64_t end; /* the store's size */
	struct hpx_range free[HPX_SPILL_FREE_MAX];
	size_t nfree;
	/* The tile writers' transposition buffers (owned, grown to the
	 * largest tile, freed by hpx_spill_cleanup): the worker's, and the
	 * parser's own (it writes a tile itself when there is no worker, or
	 * while the worker is behind), so the two may write at once. */
	struct hpx_tbuf {
		double *p;
		size_t cap; /* bytes */
	} tbuf_worker, tbuf_parser;
};

struct hpx_sealed; /* a preset aggregated at its end (seal.c) */
struct hpx_worker; /* the thread that seals presets in the background (seal.c) */

struct hpx_preset {
	char name[128];
	/* Early aggregation: the preset's result, made when it ended (its
	 * samples are then released); NULL while open or without it. */
	struct hpx_sealed *sealed;
	uint64_t first_lineno;
	struct hpx_header *hdrs;
	size_t nhdrs, hdrs_cap;
	struct hpx_iter *iters; /* the last one is open while cur_open */
	size_t niters, iters_cap;
	bool cur_open;
	bool in_iter;
	long cur_hdr;
	uint64_t last_iter_no;
	char *strs;
	size_t strs_len, strs_cap;
	uint64_t parse_errors;
	/* With a spill: iterations [0, tiled) are in tiles (their samples in
	 * the store), the rest in memory; Layer/Op offsets of iterations
	 * [1, ids_freed) are released (only the first's and the previous
	 * one's are read again). */
	struct hpx_tile *tiles, *tiles_tail;
	size_t tiled, ids_freed;
	/* Row prefixes of the previous iteration, one per row (NULL until
	 * needed, or when it could not be allocated: then unused). */
	struct hpx_pfx *pfx;
	size_t pfx_cap;
};

struct hpx_meta {
	char *key; /* lower case */
	char *value;
	size_t vlen;
	uint64_t lineno;
};

struct hpx_noted {
	uint64_t count;
	uint64_t lines[HPX_MAX_NOTED];
};

struct ergon_hpx_parser {
	struct ergon_hpx_limits lim;
	struct hpx_lines lines;
	char *scratch;		/* unquoted CSV fields of the current line */
	const char *field_base; /* fields are offsets into this: the line or scratch */
	double *fast_vals;	/* counters of the row_fast path, max_columns */
	size_t fast_cap;
	struct hpx_span *fields; /* max_columns + 1 */
	struct ergon_err *feed_err;
	int failed;
	bool finished;
	uint64_t bytes;

	bool in_session, ended;
	uint64_t start_lineno, end_lineno;
	uint64_t heartbeats;
	bool has_hb_clean_iters;
	int64_t hb_clean_iters;

	struct hpx_meta *meta;
	size_t nmeta, meta_cap;

	struct hpx_preset *presets;
	size_t npresets, presets_cap;
	long cur;
	size_t cells;
	size_t text_bytes; /* Layer/Op arena bytes over all presets */

	uint64_t parse_errors;
	struct hpx_noted bad_rows, bad_cells, dup_preset, iter_order, restarts;
	/* Negative counter cells: kept (as the reference does) but flagged. */
	struct hpx_noted neg_cells;
	/* `HPX_HEARTBEAT rtt_dropped bytes=N` reports and their sum. */
	struct hpx_noted target_drops;
	/* HPX_CLEAN_ITER=<n> trace lines (profiling.clean_window_trace): how
	 * many, and those whose n was not their position (first line kept). */
	uint64_t clean_iter_lines, clean_iter_out_of_seq, clean_iter_first_bad_line;
	uint64_t target_dropped_bytes;
	char bad_rows_detail[96];
	char dup_preset_name[128];
	bool dropped_open_iter;
	bool cut_mid_line; /* the input ended inside a line (no final '\n') */

	struct hpx_terminal_state term;

	/* Early aggregation (ergon_hpx_parser_aggregate_early): 0 = off. */
	int early_method;
	const struct hpx_early_ops *early; /* NULL when off */
	struct hpx_worker *worker;	   /* NULL: presets are sealed inline */
	/* ergon_hpx_parser_spill: samples of ended iterations go to the store. */
	bool spilling;
	struct hpx_spill spill;
	/* Recycled iteration buffers (with a spill): vals + ovf, id_off + op_off. */
	struct hpx_pool pool_vals, pool_ids;
};

/* --- early aggregation (seal.c, aggregate.c) ---------------------------
 * Set by ergon_hpx_parser_aggregate_early (seal.c); the parser and the
 * aggregation call them through this table, so that the files' arrows
 * point one way (parser.c <- aggregate.c <- seal.c). seal aggregates a
 * preset that has ended (inline, or queued for the worker thread, which
 * reads a copy of the preset struct: the parser neither grows nor frees a
 * sealed preset's buffers until wait returns) and releases its samples.
 * wait returns once every queued preset is sealed; the parser calls it
 * before it clears a preset, makes a result or is freed; stop ends the
 * worker; sealed_free frees a record (NULL: no-op). */
struct hpx_early_ops {
	void (*seal)(struct ergon_hpx_parser *p, struct hpx_preset *ps);
	/* Write a tile to the spill (queued for the worker, or inline); may
	 * wait while the worker has many tiles queued. */
	void (*tile)(struct ergon_hpx_parser *p, struct hpx_tile *t);
	void (*wait)(struct ergon_hpx_parser *p);
	void (*stop)(struct ergon_hpx_parser *p);
	void (*sealed_free)(struct hpx_sealed *s);
};
/* aggregate.c: a new empty record (NULL: out of memory); aggregate ps
 * into it and free ps's samples (the record keeps ERGON_ENOMEM when the
 * aggregation failed, and the samples are kept); free a record (NULL: no-op). */
struct hpx_sealed *hpx_sealed_new(void);
/* A preset's aggregation in progress, which a second thread may help with
 * (aggregate.c): publish is called once it may (hpx_seal_help from another
 * thread takes a share of its layers), retract before its results are
 * merged, and must not return while a helper still runs. */
struct hpx_agg_shared;
struct hpx_help_hook {
	void (*publish)(void *ctx, struct hpx_agg_shared *sh);
	void (*retract)(void *ctx, struct hpx_agg_shared *sh);
	void *ctx;
};
/* hook: NULL when no other thread helps. */
void hpx_seal_compute(struct hpx_preset *ps, int method, struct hpx_spill *sp, struct hpx_sealed *s,
		      const struct hpx_help_hook *hook);
/* Aggregate blocks of sh's layers until none is left (the first call
 * only; later ones return at once). */
void hpx_seal_help(struct hpx_agg_shared *sh);
void hpx_sealed_free(struct hpx_sealed *s);

/* spill.c. hpx_tiles_take: move the ended iterations of ps (all of them
 * when `all`, else only full runs) into tiles, hand each to early->tile,
 * and release Layer/Op offsets no longer read. hpx_tile_write: the job
 * (transpose through tb, which only the calling thread uses; write; free
 * the samples; errors land in t->rc/msg).
 * hpx_tiles_gather: what gather_block makes, for layers [l0, l0 + nb) of
 * the tiled iterations: gather, frozen (frozen[b * ni + it]), the counts
 * per layer (added to), overflow; 0 or the store's error in err.
 * hpx_tiles_free: release the store's ranges, and free the tiles when
 * `structs` (else they stay, emptied, for the parser to free). */
void hpx_tiles_take(struct ergon_hpx_parser *p, struct hpx_preset *ps, bool all);
void hpx_tile_write(struct hpx_spill *sp, struct hpx_tbuf *tb, struct hpx_tile *t);
struct ergon_pmu_layer;
int hpx_tiles_gather(const struct hpx_preset *ps, struct hpx_spill *sp, const char *const *names,
		     const size_t *lens, size_t ncols, size_t l0, size_t nb, size_t per_layer,
		     double *gather, bool *frozen, size_t *nrows_of, size_t *nfrozen_of,
		     struct ergon_pmu_layer *layers, struct ergon_err *err);
void hpx_tiles_free(struct hpx_spill *sp, struct hpx_preset *ps, bool structs);
/* Hand every range back to the store (io.release) and drop the lock. */
void hpx_spill_cleanup(struct hpx_spill *sp);
size_t hpx_slot_of(const struct hpx_header *h, const char *name, size_t nlen);

/* A frozen row reads 0 on every counter it has (g[c * stride], c < n; NaN
 * is a counter it lacks) and has at least one. */
static inline bool hpx_row_frozen(const double *g, size_t stride, size_t n)
{
	bool seen = false;
	for (size_t c = 0; c < n; c++) {
		double v = g[c * stride];
		if (v != v)
			continue;
		if (v != 0.0)
			return false;
		seen = true;
	}
	return seen;
}

int hpx_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t max);
const struct hpx_meta *hpx_meta_get(const struct ergon_hpx_parser *p, const char *key);

#endif
