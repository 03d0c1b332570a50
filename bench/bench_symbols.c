/* bench_symbols.c — how fast addresses become names, and how long each output takes for a large
 * profile. libLLVM-14 (≈100 MB, 44k exported functions) is dlopen'ed into this process, 100,000
 * distinct addresses are drawn across its code, and the symbolizer names them: the first pass
 * pays for nothing but the lookups once the object is loaded (the load is timed on its own), the
 * second pass is the per-address cache. The same addresses (as file addresses) are written to
 * `addrs.txt` so that bench/symbols.sh can time llvm-symbolizer and addr2line on them in the same
 * run. Then a profile of 20,000 distinct 24-frame stacks over those addresses is printed as text,
 * JSON, folded, and written as pprof and as an SVG flame graph, each timed. It prints a table; it
 * passes or fails on nothing. Usage: bench_symbols OUTDIR. */
#include "output/output.h"
#include "elfproc/elfproc.h"
#include "common/common.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NADDR 100000
#define NSTACKS 20000
#define DEPTH 24
#define NCPUS 1

static uint64_t *addrs;
static const char *outdir;

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* The text mapping of libLLVM in our process: start, end and its file offset. */
static int llvm_text(uint64_t *start, uint64_t *end, uint64_t *pgoff, char *path, size_t n)
{
	dt_proc_mappings maps;
	int rc = dt_proc_mappings_read(0, &maps);

	if (rc < 0)
		return rc;
	rc = -ENOENT;
	for (size_t i = 0; i < maps.n && rc; i++) {
		const dt_proc_mapping *m = &maps.v[i];

		if (!strstr(m->path, "libLLVM") || m->perms[2] != 'x')
			continue;
		*start = m->start;
		*end = m->end;
		*pgoff = m->offset;
		snprintf(path, n, "%s", m->path);
		rc = 0;
	}
	dt_proc_mappings_free(&maps);
	return rc;
}

/* A fake stack source: stack id i is DEPTH addresses from the drawn set. */
static int frames_of(void *ctx, const dt_type *t, const struct dt_stack_ref *ref, uint64_t *f,
		     uint32_t max)
{
	uint32_t n = DT_MIN(max, (uint32_t)DEPTH);
	for (uint32_t k = 0; k < n; k++)
		f[k] = addrs[(ref->id * 7919 + k * 104729) % NADDR];
	return (int)n;
}

static dt_type T_COUNT = { .kind = DT_T_COUNT, .size = 8, .align = 8 };
static dt_type T_USTACK = { .kind = DT_T_STACK, .size = 16, .align = 8,
			    .stack = { DT_STACK_USER_FP, DT_STACKMODE_DEFAULT, DEPTH } };

static void time_output(dt_symbolizer *sym, const char *label, dt_out_format fmt)
{
	dt_map_sym m = { .name = "@", .key = &T_USTACK, .value = &T_COUNT };
	dt_map_layout l;
	dt_map_layout_of(&m, &l);
	size_t vs = l.percpu ? DT_ALIGN(l.value_size, 8) * NCPUS : l.value_size;
	uint8_t *keys = xcalloc(NSTACKS, l.key_size), *vals = xcalloc(NSTACKS, vs);
	for (uint32_t i = 0; i < NSTACKS; i++) {
		struct dt_stack_ref r = { .id = i, .pid = (uint32_t)getpid() };
		uint64_t c = 1 + i % 97;
		memcpy(keys + (size_t)i * l.key_size, &r, sizeof(r));
		memcpy(vals + (size_t)i * vs, &c, 8);
	}
	char *path = xasprintf("%s/out.%s", outdir, label);
	FILE *f = fopen(path, "w");
	dt_out_opts oo = { .file = f, .format = fmt, .sym = sym, .stack_frames = frames_of,
			   .ncpus = NCPUS };
	dt_out *o = dt_out_new(&oo);
	uint64_t t0 = dt_now_ns();
	dt_out_print_entries(o, &m, &l, keys, vals, NSTACKS, 0, 0);
	dt_out_flush(o);
	uint64_t t = dt_now_ns() - t0;
	long size = ftell(f);
	dt_out_free(o);
	fclose(f);
	printf("| write %-16s | %10.1f ms | %9.1f MB |\n", label, ms(t), (double)size / 1e6);
	free(path);
	free(keys);
	free(vals);
}

/* pprof and the flame graph read real BPF maps: one is created and filled (root). */
static void time_profile(dt_symbolizer *sym, const char *label, dt_profile_kind kind)
{
	dt_map_sym m = { .name = "@cpu", .key = &T_USTACK, .value = &T_COUNT };
	const dt_map_sym *mp = &m;
	dt_map_layout l;
	dt_map_layout_of(&m, &l);
	int ncpus = libbpf_num_possible_cpus();
	size_t vs = l.percpu ? DT_ALIGN(l.value_size, 8) * (size_t)ncpus : l.value_size;
	int fd = bpf_map_create(l.bpf_map_type, "bench", l.key_size, l.value_size, NSTACKS, NULL);
	if (fd < 0) {
		printf("| write %-16s | %13s | %12s |\n", label, "needs root", "");
		return;
	}
	uint8_t *key = xcalloc(1, l.key_size), *val = xcalloc(1, vs);
	for (uint32_t i = 0; i < NSTACKS; i++) {
		struct dt_stack_ref r = { .id = i, .pid = (uint32_t)getpid() };
		uint64_t c = 1 + i % 97;
		memcpy(key, &r, sizeof(r));
		memcpy(val, &c, 8);
		bpf_map_update_elem(fd, key, val, BPF_ANY);
	}
	char *path = xasprintf("%s/out.%s", outdir, label);
	dt_out_opts oo = { .file = stdout, .format = DT_OUT_TEXT, .sym = sym,
			   .stack_frames = frames_of, .ncpus = NCPUS };
	dt_out *o = dt_out_new(&oo);
	uint64_t t0 = dt_now_ns();
	FILE *f = fopen(path, "w");
	int rc = f ? dt_out_write_profile(o, kind, f, &mp, &fd, 1) : -errno;
	if (f && fclose(f) && !rc)
		rc = -errno;
	uint64_t t = dt_now_ns() - t0;
	f = fopen(path, "r");
	long size = 0;
	if (f && !fseek(f, 0, SEEK_END))
		size = ftell(f);
	if (f)
		fclose(f);
	if (rc)
		printf("| write %-16s | failed: %s |\n", label, strerror(-rc));
	else
		printf("| write %-16s | %10.1f ms | %9.1f MB |\n", label, ms(t), (double)size / 1e6);
	dt_out_free(o);
	close(fd);
	free(key);
	free(val);
	free(path);
}

int main(int argc, char **argv)
{
	char path[4096];
	uint64_t start, end, pgoff;

	outdir = argc > 1 ? argv[1] : ".";
	if (!dlopen("libLLVM-14.so.1", RTLD_NOW | RTLD_LOCAL) ||
	    llvm_text(&start, &end, &pgoff, path, sizeof(path))) {
		fprintf(stderr, "bench_symbols: cannot load libLLVM-14 (apt-get install llvm-14)\n");
		return 1;
	}
	/* Distinct addresses spread over the whole code mapping (a multiplicative walk). */
	addrs = xcalloc(NADDR, sizeof(*addrs));
	uint64_t span = end - start;
	char *seen = xcalloc(span, 1);
	for (size_t i = 0, x = 12345; i < NADDR;) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t off = (x >> 11) % span;
		if (seen[off])
			continue;
		seen[off] = 1;
		addrs[i++] = start + off;
	}
	free(seen);
	/* For the other tools: file offsets are the ELF addresses of libLLVM's text (p_vaddr ==
	 * p_offset there); addr - start + pgoff. */
	char *ap = xasprintf("%s/addrs.txt", outdir);
	FILE *af = fopen(ap, "w");
	for (size_t i = 0; i < NADDR; i++)
		fprintf(af, "0x%" PRIx64 "\n", addrs[i] - start + pgoff);
	fclose(af);
	free(ap);
	printf("%s\n", path);

	dt_symbolizer *sym = dt_sym_new();
	dt_sym_frame fr[DT_SYM_MAX_INLINE];
	uint32_t me = (uint32_t)getpid();
	uint64_t t0 = dt_now_ns();
	dt_sym_note_pid(sym, me); /* opens every mapped object, libLLVM included */
	uint64_t t_load = dt_now_ns() - t0;
	size_t named = 0;
	t0 = dt_now_ns();
	for (size_t i = 0; i < NADDR; i++)
		named += dt_sym_user_frames(sym, me, 0, addrs[i], true, fr, DT_SYM_MAX_INLINE) > 0;
	uint64_t t_cold = dt_now_ns() - t0;
	t0 = dt_now_ns();
	for (size_t i = 0; i < NADDR; i++)
		dt_sym_user_frames(sym, me, 0, addrs[i], true, fr, DT_SYM_MAX_INLINE);
	uint64_t t_warm = dt_now_ns() - t0;
	t0 = dt_now_ns();
	char buf[1024];
	for (size_t i = 0; i < NADDR; i++)
		dt_sym_user(sym, me, 0, addrs[i], true, buf, sizeof(buf));
	uint64_t t_text = dt_now_ns() - t0;

	printf("| %-22s | %13s | %12s |\n", "dwarftrace symbolizer", "time", "per address");
	printf("|------------------------|---------------|--------------|\n");
	printf("| load objects (note)    | %10.1f ms | %12s |\n", ms(t_load), "");
	printf("| 100k distinct, cold    | %10.1f ms | %9.0f ns |\n", ms(t_cold),
	       (double)t_cold / NADDR);
	printf("| 100k again, cached     | %10.1f ms | %9.0f ns |\n", ms(t_warm),
	       (double)t_warm / NADDR);
	printf("| 100k as text (usym)    | %10.1f ms | %9.0f ns |\n", ms(t_text),
	       (double)t_text / NADDR);
	printf("named by a symbol: %zu of %d (libLLVM ships .dynsym only; the rest print as "
	       "libLLVM-14.so.1+0xoff)\n\n", named, NADDR);

	printf("| %-22s | %13s | %12s |\n", "output, 20k stacks x 24", "time", "size");
	printf("|------------------------|---------------|--------------|\n");
	time_output(sym, "text", DT_OUT_TEXT);
	time_output(sym, "json", DT_OUT_JSON);
	time_output(sym, "folded", DT_OUT_FOLDED);
	time_profile(sym, "pprof.pb.gz", DT_PROFILE_PPROF);
	time_profile(sym, "flamegraph.svg", DT_PROFILE_FLAMEGRAPH);
	dt_sym_free(sym);
	free(addrs);
	return 0;
}
