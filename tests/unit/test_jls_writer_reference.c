/* Our JLS writer against the reference writer's structure. Neither the
 * Joulescope UI nor the reference reader (pyjls) can be installed here
 * (neither is packaged for Debian or npm), so the recording ergon writes
 * is compared, chunk by chunk, with ../shared/fixtures/jls/shared_basic.jls,
 * which the reference library (jetperch/jls 0.17.0) wrote with the same
 * layout: source 1 "JS220-000415", 100 kHz f32 current, voltage, power and
 * u1 gpi[0], sample ids from 1234567. Both files are walked with an
 * independent parser written here from the JLS v2 layout (32-byte file
 * header; 32-byte chunk headers with item_next, item_prev, tag, chunk_meta,
 * payload_length, payload_prev_length and a CRC32C of the first 28 bytes;
 * the payload padded to 8 bytes with its CRC32C last) and the bitwise
 * CRC32C of tests/support, and:
 * - the file header's magic and format version equal the reference's;
 * - every header and payload CRC checks out in both files (so the walker
 *   is itself checked against the reference's bytes);
 * - every doubly-linked chunk list is consistent in both (item_next lands
 *   on a chunk whose item_prev points back, of the same tag, signal and
 *   level for a track's DATA, INDEX and SUMMARY lists);
 * - the same kinds of chunk exist for the same signals (definitions, FSR,
 *   annotation, UTC and VSR tracks, DATA, INDEX, SUMMARY, USER_DATA, END);
 * - the definitions come in the reference's order, chunk for chunk, up to
 *   the first sample (its reader wants USER_DATA, SOURCE_DEF and
 *   SIGNAL_DEF among the first three chunks);
 * - source 0, signal 0 and source 1 are byte for byte the reference's; the
 *   signal definitions equal it but for the chunk and summary sizes, which
 *   are ours (10000 samples per DATA chunk, 1000 per level-1 entry, 100
 *   entries per SUMMARY, 10 per entry above, for every signal) and are a
 *   layout the reference writer itself keeps (its alignment, read from
 *   jls_core_signal_def_align: the entry a multiple of 256 / bits for f32,
 *   the chunk a multiple of the entry, the entries per SUMMARY a multiple
 *   of the decimation and of the entries per chunk);
 * - each signal's first DATA chunk starts at the same sample id with the
 *   same entry size; track HEAD offsets point at chunks of their track.
 * That the reference library reads the file as its samples say is
 * tests/functional/test_jls_reference_readers.sh, with the library's own
 * readers. */
#include "ergon/jls.h"
#include "ergon/jls_writer.h"
#include "test_support.h"
#include "ts_jls_writer.h"

#include <stdlib.h>
#include <string.h>

#define N 400000u /* 4 s at 100 kHz, as the reference file */
#define MAX_CHUNKS 4096

struct chunk {
	size_t off;
	uint64_t next, prev;
	uint8_t tag;
	uint16_t meta;
	uint32_t plen;
	const uint8_t *payload;
};

struct jfile {
	uint8_t *b;
	size_t len;
	struct chunk c[MAX_CHUNKS];
	size_t n;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* Walk the file, checking every CRC. */
static void walk(struct jfile *f, const char *path)
{
	f->b = (uint8_t *)ts_read_file(path, &f->len);
	assert_non_null(f->b);
	assert_true(f->len > 64);
	if (rd32(f->b + 28) != ts_crc32c(f->b, 28))
		fail_msg("%s: file header CRC", path);
	if (rd64(f->b + 16) != f->len)
		fail_msg("%s: header length %llu, file %zu", path,
			 (unsigned long long)rd64(f->b + 16), f->len);
	size_t off = 32;
	f->n = 0;
	while (off + 32 <= f->len) {
		const uint8_t *h = f->b + off;
		if (rd32(h + 28) != ts_crc32c(h, 28))
			fail_msg("%s: chunk header CRC at %zu", path, off);
		assert_true(f->n < MAX_CHUNKS);
		struct chunk *c = &f->c[f->n++];
		c->off = off;
		c->next = rd64(h);
		c->prev = rd64(h + 8);
		c->tag = h[16];
		c->meta = (uint16_t)(h[18] | h[19] << 8);
		c->plen = rd32(h + 20);
		c->payload = h + 32;
		size_t span = c->plen ? ((c->plen + 4u + 7u) & ~7u) : 0;
		assert_true(off + 32 + span <= f->len);
		if (c->plen && rd32(h + 32 + span - 4) != ts_crc32c(h + 32, c->plen))
			fail_msg("%s: payload CRC of tag 0x%02x at %zu", path, c->tag, off);
		off += 32 + span;
	}
	assert_int_equal(off, f->len);
}

static const struct chunk *at(const struct jfile *f, uint64_t off)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->c[i].off == off)
			return &f->c[i];
	return NULL;
}

/* Signal id of a track chunk (low 12 bits), or the meta itself. */
static unsigned sig_of(const struct chunk *c)
{
	return c->tag >= 0x20 && c->tag < 0x40 ? (unsigned)(c->meta & 0xfffu) : c->meta;
}

static void lists_consistent(const struct jfile *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct chunk *c = &f->c[i];
		if (c->next == 0)
			continue;
		const struct chunk *d = at(f, c->next);
		/* Definitions (sources, signals, track DEF and HEAD) form one
		 * list; a track's DATA, INDEX and SUMMARY chunks one list each
		 * per signal and level; USER_DATA one list. */
		int track_data = c->tag >= 0x20 && c->tag < 0x40 && (c->tag & 7u) >= 2;
		if (d == NULL || d->prev != c->off ||
		    (track_data && (d->tag != c->tag || d->meta != c->meta)) ||
		    (c->tag == 0x40 && d->tag != 0x40))
			fail_msg("%s: tag 0x%02x at %zu: item_next %llu is not its successor", name,
				 c->tag, c->off, (unsigned long long)c->next);
	}
}

/* The first chunk of tag with signal (or meta) id; NULL if none. */
static const struct chunk *first(const struct jfile *f, uint8_t tag, unsigned id)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->c[i].tag == tag && sig_of(&f->c[i]) == id)
			return &f->c[i];
	return NULL;
}

static int has_kind(const struct jfile *f, uint8_t tag, unsigned id)
{
	return first(f, tag, id) != NULL;
}

static void same_payload(const struct chunk *a, const struct chunk *b, const char *what)
{
	assert_non_null(a);
	assert_non_null(b);
	if (a->plen != b->plen || memcmp(a->payload, b->payload, a->plen) != 0)
		fail_msg("%s: payload differs from the reference's (%u vs %u bytes)", what, a->plen,
			 b->plen);
}

static void write_ours(const char *path)
{
	struct ergon_jls_writer_config cfg = {.path = path,
					      .sample_rate_hz = 100000,
					      .source_name = "JS220-000415",
					      .vendor = "Jetperch",
					      .model = "JS220",
					      .version = "",
					      .serial = "000415",
					      .digital_lines = 1,
					      .with_power = 1,
					      .utc_q30_start = (int64_t)1000 << 30,
					      .sample_id_offset = 1234567,
					      .note_json = "{\"ergon\":\"reference layout test\"}"};
	struct ergon_jls_writer *w = NULL;
	struct ergon_err err = {0};
	if (ergon_jls_writer_open(&cfg, &w, &err) != 0)
		fail_msg("open: %s", err.msg);
	float c[1000], v[1000];
	uint32_t d[1000];
	for (uint64_t k0 = 0; k0 < N; k0 += 1000) {
		for (unsigned j = 0; j < 1000; j++) {
			uint64_t k = k0 + j;
			int high = k >= 100000 && k < 300000;
			c[j] = high ? 0.030f : 0.005f;
			v[j] = 3.3f;
			d[j] = (uint32_t)high;
		}
		assert_int_equal(ergon_jls_writer_push(w, c, v, NULL, d, 1000, &err), 0);
		if (k0 % 10000 == 0)
			assert_int_equal(
			    ergon_jls_writer_utc(
				w, k0, ((int64_t)1000 << 30) + (int64_t)(k0 << 30) / 100000, &err),
			    0);
	}
	assert_int_equal(ergon_jls_writer_close(w, NULL, &err), 0);
}

static void same_structure_as_the_reference(void **state)
{
	(void)state;
	char *ref_path = ts_fixture("jls/shared_basic.jls");
	char *dir = ts_tmpdir();
	char *our_path = ts_strf("%s/ours.jls", dir);
	write_ours(our_path);
	struct jfile *ref = calloc(1, sizeof(*ref)), *our = calloc(1, sizeof(*our));
	assert_non_null(ref);
	assert_non_null(our);
	walk(ref, ref_path);
	walk(our, our_path);
	/* Magic (16 bytes) and format version (bytes 24..27). */
	assert_memory_equal(ref->b, our->b, 16);
	assert_memory_equal(ref->b + 24, our->b + 24, 4);
	lists_consistent(ref, "reference");
	lists_consistent(our, "ours");
	/* The same kinds of chunk, both ways: definitions (0x01, 0x02), the
	 * FSR track (0x20-0x24), the VSR track of signal 0 (0x28, 0x29),
	 * annotation tracks (0x30, 0x31), the UTC track (0x38-0x3c), END. */
	for (int pass = 0; pass < 2; pass++) {
		const struct jfile *a = pass ? our : ref, *b = pass ? ref : our;
		for (size_t i = 0; i < a->n; i++) {
			const struct chunk *c = &a->c[i];
			if (c->tag == 0x40)
				continue; /* USER_DATA: its meta is the note's storage type */
			if (!has_kind(b, c->tag, sig_of(c)))
				fail_msg("tag 0x%02x signal %u is in %s, not in %s", c->tag,
					 sig_of(c), pass ? "ours" : "the reference",
					 pass ? "the reference" : "ours");
		}
	}
	assert_true(has_kind(our, 0x40, 0));
	assert_true(has_kind(our, 0xff, 0));
	/* The definitions in the reference's order, up to the first sample. */
	for (size_t i = 0;; i++) {
		assert_true(i < ref->n && i < our->n);
		const struct chunk *a = &ref->c[i], *b = &our->c[i];
		if (a->tag == 0x22 || a->tag == 0x3a) {
			assert_true(b->tag == 0x22 || b->tag == 0x3a);
			assert_true(i > 8);
			break;
		}
		/* USER_DATA's meta is the note's storage type (ours JSON). */
		if (a->tag != b->tag || (a->tag != 0x40 && sig_of(a) != sig_of(b)))
			fail_msg("chunk %zu: tag 0x%02x signal %u, the reference's 0x%02x %u", i,
				 b->tag, sig_of(b), a->tag, sig_of(a));
	}
	assert_int_equal(our->c[0].tag, 0x40);
	assert_int_equal(our->c[1].tag, 0x01);
	assert_int_equal(our->c[2].tag, 0x02);
	/* Definitions byte for byte: source 0, the global annotation signal 0,
	 * source 1 with the same identity. */
	same_payload(first(ref, 0x01, 0), first(our, 0x01, 0), "SOURCE_DEF 0");
	same_payload(first(ref, 0x02, 0), first(our, 0x02, 0), "SIGNAL_DEF 0");
	same_payload(first(ref, 0x01, 1), first(our, 0x01, 1), "SOURCE_DEF 1");
	/* The signals: source, type, data type and rate (bytes 0..11), the
	 * annotation and UTC decimation (36..43) and the name and units from
	 * byte 128 equal the reference's; samples per DATA chunk and the
	 * summary factors (12..35) are ours. */
	for (unsigned s = 1; s <= 4; s++) {
		const struct chunk *rs = first(ref, 0x02, s), *os = first(our, 0x02, s);
		assert_non_null(rs);
		assert_non_null(os);
		assert_memory_equal(rs->payload, os->payload, 12);
		assert_memory_equal(rs->payload + 36, os->payload + 36, 8);
		assert_int_equal(rs->plen, os->plen);
		assert_memory_equal(rs->payload + 128, os->payload + 128, rs->plen - 128);
		uint32_t spd = rd32(os->payload + 12), dec = rd32(os->payload + 16),
			 eps = rd32(os->payload + 20), sd = rd32(os->payload + 24);
		assert_int_equal(spd, 10000);
		assert_int_equal(dec, 1000);
		assert_int_equal(eps, 100);
		assert_int_equal(sd, 10);
		if (s <= 3) {
			/* f32: the reference writer keeps them as they are. */
			assert_int_equal(dec % (256 / 32), 0);
			assert_int_equal(spd % dec, 0);
			assert_int_equal(eps % sd, 0);
			assert_int_equal(eps % (spd / dec), 0);
		}
	}
	/* First DATA chunk per signal: first sample id, entry size. */
	for (unsigned s = 1; s <= 4; s++) {
		const struct chunk *rd = first(ref, 0x22, s), *od = first(our, 0x22, s);
		assert_non_null(rd);
		assert_non_null(od);
		assert_int_equal(rd64(rd->payload), 1234567);
		assert_int_equal(rd64(od->payload), rd64(rd->payload));
		assert_memory_equal(rd->payload + 12, od->payload + 12, 2); /* entry bits */
		/* UTC entries: same entry size. */
		const struct chunk *ru = first(ref, 0x3a, s), *ou = first(our, 0x3a, s);
		assert_non_null(ru);
		assert_non_null(ou);
		assert_memory_equal(ru->payload + 12, ou->payload + 12, 2);
	}
	/* Track HEADs: 16 offsets; each set one lands on a chunk of the same
	 * track (FSR 0x21 -> 0x22-0x24, UTC 0x39 -> 0x3a-0x3c) and signal. */
	for (int pass = 0; pass < 2; pass++) {
		const struct jfile *f = pass ? our : ref;
		for (size_t i = 0; i < f->n; i++) {
			const struct chunk *c = &f->c[i];
			if (c->tag != 0x21 && c->tag != 0x39)
				continue;
			assert_int_equal(c->plen, 128);
			for (unsigned k = 0; k < 16; k++) {
				uint64_t o = rd64(c->payload + 8 * k);
				if (o == 0)
					continue;
				const struct chunk *t = at(f, o);
				if (t == NULL || t->tag < c->tag + 1 || t->tag > c->tag + 3 ||
				    sig_of(t) != sig_of(c))
					fail_msg("%s: HEAD 0x%02x signal %u level %u -> %llu is "
						 "not a chunk of its track",
						 pass ? "ours" : "reference", c->tag, sig_of(c), k,
						 (unsigned long long)o);
			}
		}
	}
	/* And our reader reads ours without a warning. */
	struct ergon_jls_reader *r = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_jls_file_open(our_path, &r, &err), 0);
	assert_int_equal(ergon_jls_reader_warnings(r)->n, 0);
	assert_string_equal(ergon_jls_reader_source_field(r, "vendor"), "Jetperch");
	ergon_jls_reader_free(r);
	free(ref->b);
	free(our->b);
	free(ref);
	free(our);
	free(our_path);
	ts_tmpdir_remove(dir);
	free(dir);
	free(ref_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(same_structure_as_the_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
