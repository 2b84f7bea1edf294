/* The target's RTT ring (target/src/rtt.c), built for the host: the ID
 * appears only after init, writes wrap, drop mode counts whole dropped
 * writes and reports them in the stream at the next line start, block mode
 * waits (here: gives up after spin_max polls with nobody draining), and
 * the down buffer yields the host's bytes. */
#include "ergon/ert_rtt.h"
#include "test_support.h"

#include <string.h>

static struct ert_rtt rtt;
static char up[32], down[8];

/* Drain like the host: copy out [rd, wr) and advance rd. */
static size_t host_drain(char *out, size_t cap)
{
	struct ert_rtt_buffer *b = &rtt.cb.up[0];
	size_t n = 0;
	while (b->rd_off != b->wr_off && n < cap) {
		out[n++] = b->buf[b->rd_off];
		b->rd_off = (b->rd_off + 1u) % b->size;
	}
	return n;
}

static void id_and_layout(void **state)
{
	(void)state;
	memset(&rtt, 0x55, sizeof rtt);
	ert_rtt_init(&rtt, up, sizeof up, down, sizeof down, ERT_RTT_DROP, 0);
	char id[16];
	for (int i = 0; i < 16; i++)
		id[i] = rtt.cb.id[i];
	assert_memory_equal(id, "SEGGER RTT\0\0\0\0\0\0", 16);
	assert_int_equal(rtt.cb.max_up, 1);
	assert_int_equal(rtt.cb.max_down, 1);
	assert_ptr_equal(rtt.cb.up[0].buf, up);
	assert_int_equal(rtt.cb.up[0].size, 32);
	assert_int_equal(rtt.cb.up[0].flags, 0); /* SEGGER NO_BLOCK_SKIP */
	assert_int_equal(rtt.cb.ext_magic, 0x44475245u);
	assert_int_equal(rtt.cb.dropped, 0);
}

static void drop_mode_counts_and_reports(void **state)
{
	(void)state;
	ert_rtt_init(&rtt, up, sizeof up, down, sizeof down, ERT_RTT_DROP, 0);
	char out[128];
	/* 31 bytes fit (one slot stays free). */
	assert_int_equal(ert_rtt_write(&rtt, "0123456789abcdefghijklmnopqrs\n", 30), 0);
	assert_int_equal(ert_rtt_pending(&rtt), 30);
	/* 5 more do not: dropped whole, counted. */
	assert_int_equal(ert_rtt_write(&rtt, "XXXX\n", 5), 0);
	assert_int_equal(rtt.cb.dropped, 5);
	assert_int_equal(ert_rtt_pending(&rtt), 30);
	assert_int_equal(host_drain(out, sizeof out), 30);
	/* A report line (34 bytes) plus the next write do not fit the
	 * 31 free bytes together: the write goes alone, the count waits. */
	assert_int_equal(ert_rtt_write(&rtt, "ok\n", 3), 0);
	assert_int_equal(host_drain(out, sizeof out), 3);
	assert_memory_equal(out, "ok\n", 3);
	/* Bigger ring for the report itself. */
	static char big[128];
	ert_rtt_init(&rtt, big, sizeof big, down, sizeof down, ERT_RTT_DROP, 0);
	rtt.cb.dropped = 5;
	assert_int_equal(ert_rtt_write(&rtt, "ok\n", 3), 0);
	struct ert_rtt_buffer *b = &rtt.cb.up[0];
	size_t n = 0;
	while (b->rd_off != b->wr_off)
		out[n++] = b->buf[b->rd_off++];
	out[n] = '\0';
	assert_string_equal(out, "HPX_HEARTBEAT rtt_dropped bytes=5\nok\n");
	/* Reported once. */
	assert_int_equal(ert_rtt_write(&rtt, "x\n", 2), 0);
	assert_int_equal(b->wr_off - b->rd_off, 2);
}

static void block_mode_waits_then_gives_up(void **state)
{
	(void)state;
	ert_rtt_init(&rtt, up, sizeof up, down, sizeof down, ERT_RTT_BLOCK, 1000);
	assert_int_equal(ert_rtt_write(&rtt, "0123456789012345678901234567890", 31), 0);
	/* Full and nobody drains: -1 after spin_max polls, not a hang. */
	assert_int_equal(ert_rtt_write(&rtt, "z", 1), -1);
	assert_int_equal(rtt.cb.dropped, 0);
}

static void wraps_around(void **state)
{
	(void)state;
	ert_rtt_init(&rtt, up, sizeof up, down, sizeof down, ERT_RTT_BLOCK, 10);
	char out[64];
	for (int i = 0; i < 5; i++) {
		assert_int_equal(ert_rtt_write(&rtt, "abcdefghijklmnopqrst\n", 21), 0);
		assert_int_equal(host_drain(out, sizeof out), 21);
		assert_memory_equal(out, "abcdefghijklmnopqrst\n", 21);
	}
	assert_int_equal(rtt.cb.up[0].wr_off, (5u * 21u) % 32u);
}

static void down_buffer_reads_host_bytes(void **state)
{
	(void)state;
	ert_rtt_init(&rtt, up, sizeof up, down, sizeof down, ERT_RTT_BLOCK, 10);
	struct ert_rtt_buffer *d = &rtt.cb.down[0];
	memcpy(d->buf + 6, "GO", 2);
	d->buf[0] = '\n';
	d->rd_off = 6;
	d->wr_off = 1;
	char got[8];
	assert_int_equal(ert_rtt_read(&rtt, got, sizeof got), 3);
	assert_memory_equal(got, "GO\n", 3);
	assert_int_equal(d->rd_off, 1);
	/* A corrupt offset written by a host: nothing read, nothing touched. */
	d->wr_off = 99;
	assert_int_equal(ert_rtt_read(&rtt, got, sizeof got), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(id_and_layout),
	    cmocka_unit_test(drop_mode_counts_and_reports),
	    cmocka_unit_test(block_mode_waits_then_gives_up),
	    cmocka_unit_test(wraps_around),
	    cmocka_unit_test(down_buffer_reads_host_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
