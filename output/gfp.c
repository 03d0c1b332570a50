/* gfp.c — printf's %gr: a kernel GFP (get free pages) mask as the kernel's tracepoints show it
 * (%pGg, show_gfp_flags): the compound names first (GFP_KERNEL, GFP_ATOMIC, …), in the order of
 * the kernel's __def_gfpflag_names, each taking its bits, then the single flags, then whatever
 * bits are left in hex (`GFP_KERNEL|__GFP_ZERO|0x80000000`), "0" for none. The bit numbers
 * change with the kernel's version and configuration (___GFP_*_BIT of include/linux/gfp_types.h
 * since 6.8: __GFP_NO_OBJ_EXT is bit 24 or 26 as KASAN_HW_TAGS adds two before it): they are
 * read once from the running kernel's BTF, which holds that enum; a kernel without it (older,
 * or no BTF) gets the numbers current bpftrace has built in, those of a kernel with every
 * option. */
#include "output/output_internal.h"
#include "common/common.h"

#include <bpf/btf.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

/* The flags' bit names, in the kernel's order: bpftrace's built-in bit is the position. */
#define DT_GFP_BITS(X)                                                                         \
	X(DMA) X(HIGHMEM) X(DMA32) X(MOVABLE) X(RECLAIMABLE) X(HIGH) X(IO) X(FS) X(ZERO)       \
	X(UNUSED) X(DIRECT_RECLAIM) X(KSWAPD_RECLAIM) X(WRITE) X(NOWARN) X(RETRY_MAYFAIL)      \
	X(NOFAIL) X(NORETRY) X(MEMALLOC) X(COMP) X(NOMEMALLOC) X(HARDWALL) X(THISNODE)          \
	X(ACCOUNT) X(ZEROTAGS) X(SKIP_ZERO) X(SKIP_KASAN) X(NO_OBJ_EXT)

enum {
#define X(n) G_##n,
	DT_GFP_BITS(X)
#undef X
	G_NBITS
};

static const char *const bit_names[G_NBITS] = {
#define X(n) "___GFP_" #n "_BIT",
	DT_GFP_BITS(X)
#undef X
};

#define B(n) (1ull << G_##n)

/* A name and the bits it stands for, as indices into bit_names (the masks are built from the
 * kernel's numbers). The order is __def_gfpflag_names': matching masks are taken first. */
static const struct {
	const char *name;
	uint64_t bits; /* B(…) of the built-in positions */
	uint64_t clear; /* bits taken out (GFP_TRANSHUGE_LIGHT is without __GFP_RECLAIM) */
} names[] = {
#define RECLAIM (B(DIRECT_RECLAIM) | B(KSWAPD_RECLAIM))
#define KERNEL (RECLAIM | B(IO) | B(FS))
#define USER (KERNEL | B(HARDWALL))
#define HIGHUSER_MOVABLE (USER | B(HIGHMEM) | B(MOVABLE) | B(SKIP_KASAN))
#define THP_LIGHT (HIGHUSER_MOVABLE | B(COMP) | B(NOMEMALLOC) | B(NOWARN))
	{ "GFP_TRANSHUGE", THP_LIGHT | B(DIRECT_RECLAIM), B(KSWAPD_RECLAIM) },
	{ "GFP_TRANSHUGE_LIGHT", THP_LIGHT, RECLAIM },
	{ "GFP_HIGHUSER_MOVABLE", HIGHUSER_MOVABLE, 0 },
	{ "GFP_HIGHUSER", USER | B(HIGHMEM), 0 },
	{ "GFP_USER", USER, 0 },
	{ "GFP_KERNEL_ACCOUNT", KERNEL | B(ACCOUNT), 0 },
	{ "GFP_KERNEL", KERNEL, 0 },
	{ "GFP_NOFS", RECLAIM | B(IO), 0 },
	{ "GFP_ATOMIC", B(HIGH) | B(KSWAPD_RECLAIM), 0 },
	{ "GFP_NOIO", RECLAIM, 0 },
	{ "GFP_NOWAIT", B(KSWAPD_RECLAIM) | B(NOWARN), 0 },
	{ "GFP_DMA", B(DMA), 0 },
	{ "__GFP_HIGHMEM", B(HIGHMEM), 0 },
	{ "GFP_DMA32", B(DMA32), 0 },
	{ "__GFP_HIGH", B(HIGH), 0 },
	{ "__GFP_IO", B(IO), 0 },
	{ "__GFP_FS", B(FS), 0 },
	{ "__GFP_ZERO", B(ZERO), 0 },
	{ "__GFP_DIRECT_RECLAIM", B(DIRECT_RECLAIM), 0 },
	{ "__GFP_KSWAPD_RECLAIM", B(KSWAPD_RECLAIM), 0 },
	{ "__GFP_WRITE", B(WRITE), 0 },
	{ "__GFP_NOWARN", B(NOWARN), 0 },
	{ "__GFP_RETRY_MAYFAIL", B(RETRY_MAYFAIL), 0 },
	{ "__GFP_NOFAIL", B(NOFAIL), 0 },
	{ "__GFP_NORETRY", B(NORETRY), 0 },
	{ "__GFP_MEMALLOC", B(MEMALLOC), 0 },
	{ "__GFP_COMP", B(COMP), 0 },
	{ "__GFP_NOMEMALLOC", B(NOMEMALLOC), 0 },
	{ "__GFP_HARDWALL", B(HARDWALL), 0 },
	{ "__GFP_THISNODE", B(THISNODE), 0 },
	{ "__GFP_ACCOUNT", B(ACCOUNT), 0 },
	{ "__GFP_ZEROTAGS", B(ZEROTAGS), 0 },
	{ "__GFP_SKIP_ZERO", B(SKIP_ZERO), 0 },
	{ "__GFP_SKIP_KASAN", B(SKIP_KASAN), 0 },
	{ "__GFP_NO_OBJ_EXT", B(NO_OBJ_EXT), 0 },
#undef THP_LIGHT
#undef HIGHUSER_MOVABLE
#undef USER
#undef KERNEL
#undef RECLAIM
};

/* The kernel's mask of each name: the built-in bits moved to where the kernel has them. */
static uint64_t masks[DT_ARRAY_SIZE(names)];
static pthread_once_t masks_once = PTHREAD_ONCE_INIT;

/* The enum of vmlinux's BTF that holds ___GFP_DMA_BIT: bit[i] gets the value of bit_names[i], -1
 * where the kernel has no such flag (configured out). False when there is no such enum. */
static bool kernel_bits(int bit[G_NBITS])
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found = false;

	if (!btf)
		return false;
	for (uint32_t id = 1; id < btf__type_cnt(btf) && !found; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *m;

		if (!btf_is_enum(t) || btf_vlen(t) == 0)
			continue;
		m = btf_enum(t);
		if (strcmp(btf__name_by_offset(btf, m[0].name_off), bit_names[G_DMA]))
			continue;
		found = true;
		for (int i = 0; i < G_NBITS; i++) {
			bit[i] = -1;
			for (uint16_t k = 0; k < btf_vlen(t); k++)
				if (!strcmp(btf__name_by_offset(btf, m[k].name_off), bit_names[i]) &&
				    m[k].val >= 0 && m[k].val < 64)
					bit[i] = m[k].val;
		}
	}
	btf__free(btf);
	return found;
}

static void make_masks(void)
{
	int bit[G_NBITS];

	if (!kernel_bits(bit))
		for (int i = 0; i < G_NBITS; i++)
			bit[i] = i;
	for (size_t n = 0; n < DT_ARRAY_SIZE(names); n++) {
		uint64_t m = 0;

		for (int i = 0; i < G_NBITS; i++) {
			if (!((names[n].bits & ~names[n].clear) & (1ull << i)))
				continue;
			if (bit[i] < 0 && names[n].bits == (1ull << i)) {
				m = 0; /* a single flag this kernel lacks: never shown */
				break;
			}
			if (bit[i] >= 0)
				m |= 1ull << bit[i];
		}
		masks[n] = m;
	}
}

void dt_fmt_gfp(dt_sbuf *b, uint64_t flags)
{
	uint64_t left = flags;
	bool first = true;

	if (!flags) {
		dt_sb_putc(b, '0');
		return;
	}
	pthread_once(&masks_once, make_masks);
	for (size_t n = 0; n < DT_ARRAY_SIZE(names); n++) {
		if (!masks[n] || (left & masks[n]) != masks[n])
			continue;
		dt_sb_printf(b, "%s%s", first ? "" : "|", names[n].name);
		left &= ~masks[n];
		first = false;
	}
	if (left)
		dt_sb_printf(b, "%s0x%" PRIx64, first ? "" : "|", left);
}
