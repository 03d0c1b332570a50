/* fuzz_unwind.c — libFuzzer harness for the unwinder's parsers of untrusted input: .eh_frame and
 * .debug_frame bytes (cfi.c), and whole ELF images (elfproc/ + elfobj.c + cfi.c): their CFI, and
 * what elfproc/ reads of them besides (segments, identity, symbols). The first input byte picks
 * what the rest is:
 *   0, 1, 2  raw bytes: an .eh_frame, a .debug_frame, an ELF image (malformed framing, headers);
 *   3, 4     a generated .eh_frame / .debug_frame: the rest is a stream of choices (as in gen.c)
 *            that always frames well-formed CIEs and FDEs (lengths, CIE pointers, augmentations,
 *            pointer encodings) around CFA programs of real x86-64 shapes and odd ones, so the
 *            mutations land in the interpreter rather than in the framing;
 *   5        a generated ELF image with such sections: .eh_frame, .debug_frame (zlib-compressed
 *            or not), a build-id note, a debuglink, PT_LOAD segments, now and then one header
 *            field broken.
 * Malformed input must give an error, never a crash, a hang or a leak; and what comes out must be
 * what the walker relies on: pcs strictly increasing, no two rows in a row with the same rule,
 * rule indexes inside the rule set.
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DDT_LIBFUZZER -D_GNU_SOURCE -I. \
 *         tests/fuzz/fuzz_unwind.c unwind/cfi.c unwind/elfobj.c elfproc/[a-z]*.c \
 *         common/xmalloc.c -lelf -lz
 * Built without DT_LIBFUZZER it replays the files given as arguments, so a crashing input can be
 * re-run under gdb. */
#include "elfproc/elfproc.h"
#include "tests/fuzz/choices.h"
#include "unwind/unwind_internal.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---------------------------------------------------------------- choices and bytes */

/* Bytes being written; the choices that decide them are shared by every buffer of one input
 * (an ELF image and the sections inside it). */
typedef struct gen {
	choices *in;
	uint8_t *out;
	size_t len, cap;
} gen;

static unsigned choose(gen *g, unsigned n)
{
	return pick(g->in, n);
}

static void put(gen *g, const void *b, size_t n)
{
	if (g->len + n > g->cap) {
		g->cap = (g->len + n) * 2 + 64;
		g->out = xrealloc(g->out, g->cap);
	}
	memcpy(g->out + g->len, b, n);
	g->len += n;
}

static void put_u(gen *g, uint64_t v, int n)
{
	uint8_t b[8];

	for (int i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(g, b, (size_t)n);
}

static void put_uleb(gen *g, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		if (v)
			b |= 0x80;
		put(g, &b, 1);
	} while (v);
}

static void put_sleb(gen *g, int64_t v)
{
	bool more = true;

	while (more) {
		uint8_t b = v & 0x7f;
		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		if (more)
			b |= 0x80;
		put(g, &b, 1);
	}
}

static void patch_u32(gen *g, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		g->out[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* ---------------------------------------------------------------- CFI sections */

typedef struct cie_info {
	size_t off;
	uint8_t version, addr_size, fde_enc, lsda_enc;
	bool z, lsda, dwarf64;
} cie_info;

typedef struct section {
	bool is_eh;
	uint64_t addr;   /* where the section is loaded: pcrel pointers resolve against it */
	uint64_t pc;     /* the next FDE's start */
	cie_info cies[4];
	unsigned ncies;
} section;

static const uint8_t regs[] = { 7, 6, 16, 3, 12, 15, 0, 5, 63, 200 };

static unsigned reg(gen *g)
{
	return regs[choose(g, sizeof(regs))];
}

static uint64_t small(gen *g)
{
	static const uint64_t v[] = { 1, 2, 8, 16, 3, 0, 24, 0x7f, 0x80, 0x7fffffff, 1ull << 40 };
	return v[choose(g, DT_ARRAY_SIZE(v))];
}

/* The DWARF expressions x86-64 code uses (cfi.c recognizes these), and a few it does not. */
static void put_block(gen *g)
{
	static const uint8_t plt[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24,
				       0x22 };
	static const uint8_t realign[] = { 0x76, 0x78, 0x06 };
	static const uint8_t rbp_at[] = { 0x76, 0x70 };
	uint8_t junk[8];

	switch (choose(g, 5)) {
	case 0:
		put_uleb(g, sizeof(plt));
		put(g, plt, sizeof(plt));
		return;
	case 1:
		put_uleb(g, sizeof(realign));
		put(g, realign, sizeof(realign));
		return;
	case 2:
		put_uleb(g, sizeof(rbp_at));
		put(g, rbp_at, sizeof(rbp_at));
		return;
	case 3: {
		unsigned n = choose(g, sizeof(junk) + 1);
		for (unsigned i = 0; i < n; i++)
			junk[i] = (uint8_t)choose(g, 256);
		put_uleb(g, n);
		put(g, junk, n);
		return;
	}
	default:
		put_uleb(g, 1000); /* longer than what is left */
		return;
	}
}

/* One CFA instruction, or a group a compiler writes (a frame-pointer prologue). */
static void put_insn(gen *g, const cie_info *c, uint64_t *loc)
{
	unsigned op = choose(g, 28);

	switch (op) {
	case 0: { /* push rbp; mov rbp, rsp */
		static const uint8_t prologue[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06 };
		put(g, prologue, sizeof(prologue));
		*loc += 4;
		return;
	}
	case 1: case 2: { /* advance_loc */
		uint8_t d = (uint8_t)(1 + choose(g, 63));
		put_u(g, 0x40 | d, 1);
		*loc += d;
		return;
	}
	case 3: /* offset */
		put_u(g, 0x80 | (reg(g) & 0x3f), 1);
		put_uleb(g, small(g));
		return;
	case 4: /* restore */
		put_u(g, 0xc0 | (reg(g) & 0x3f), 1);
		return;
	case 5:
		put_u(g, 0x00, 1);
		return;
	case 6: { /* set_loc: forward, or (rarely) back */
		uint64_t to = choose(g, 8) ? *loc + 1 + choose(g, 64) : *loc - 1;
		put_u(g, 0x01, 1);
		put_u(g, to, c->addr_size == 4 ? 4 : 8);
		*loc = to;
		return;
	}
	case 7: { /* advance_loc1/2/4 */
		static const int sz[] = { 1, 2, 4 };
		int k = (int)choose(g, 3);
		uint64_t d = choose(g, 4) ? 1 + choose(g, 200) : (1ull << (8 * sz[k])) - 1;
		put_u(g, 0x02 + (unsigned)k, 1);
		put_u(g, d, sz[k]);
		*loc += d;
		return;
	}
	case 8: case 9: /* def_cfa */
		put_u(g, 0x0c, 1);
		put_uleb(g, reg(g));
		put_uleb(g, small(g));
		return;
	case 10:
		put_u(g, 0x0d, 1);
		put_uleb(g, reg(g));
		return;
	case 11: case 12:
		put_u(g, 0x0e, 1);
		put_uleb(g, small(g));
		return;
	case 13:
		put_u(g, 0x0f, 1);
		put_block(g);
		return;
	case 14: /* expression, val_expression */
		put_u(g, choose(g, 2) ? 0x10 : 0x16, 1);
		put_uleb(g, reg(g));
		put_block(g);
		return;
	case 15: /* offset_extended, offset_extended_sf, GNU_negative_offset_extended */
		put_u(g, (uint64_t[]){ 0x05, 0x11, 0x2f }[choose(g, 3)], 1);
		put_uleb(g, reg(g));
		put_uleb(g, small(g)); /* as sleb: small positive values read the same */
		return;
	case 16: /* restore_extended, undefined, same_value */
		put_u(g, 0x06 + choose(g, 3), 1);
		put_uleb(g, reg(g));
		return;
	case 17: /* register */
		put_u(g, 0x09, 1);
		put_uleb(g, reg(g));
		put_uleb(g, reg(g));
		return;
	case 18: case 19: { /* remember_state … restore_state, or one of them alone */
		unsigned k = choose(g, 4);
		put_u(g, k == 3 ? 0x0b : 0x0a, 1);
		if (k == 0) {
			put_insn(g, c, loc);
			put_u(g, 0x0b, 1);
		}
		return;
	}
	case 20: /* def_cfa_sf, def_cfa_offset_sf */
		if (choose(g, 2)) {
			put_u(g, 0x12, 1);
			put_uleb(g, reg(g));
		} else {
			put_u(g, 0x13, 1);
		}
		put_sleb(g, -(int64_t)choose(g, 4) + (int64_t)choose(g, 3));
		return;
	case 21: /* val_offset, val_offset_sf */
		put_u(g, 0x14 + choose(g, 2), 1);
		put_uleb(g, reg(g));
		put_sleb(g, -2);
		return;
	case 22:
		put_u(g, 0x2e, 1);
		put_uleb(g, small(g));
		return;
	case 23: /* the usual epilogue: back to rsp+8 */
		put_u(g, 0x0c, 1);
		put_uleb(g, 7);
		put_uleb(g, 8);
		return;
	case 24: /* the return address undefined: the outermost frame */
		put_u(g, 0x07, 1);
		put_uleb(g, 16);
		return;
	case 25: /* remember_state nested deeper than the interpreter's stack */
		for (int i = 0; i < 17; i++)
			put_u(g, 0x0a, 1);
		return;
	case 26: /* an instruction cfi.c does not know */
		put_u(g, (uint64_t[]){ 0x1c, 0x2d, 0x3f, 0x17 }[choose(g, 4)], 1);
		return;
	default: /* cut short: an opcode whose operands are missing */
		put_u(g, (uint64_t[]){ 0x0c, 0x05, 0x01, 0x04 }[choose(g, 4)], 1);
		return;
	}
}

static void put_insns(gen *g, const cie_info *c, uint64_t *loc, unsigned max)
{
	unsigned n = choose(g, max + 1);

	for (unsigned i = 0; i < n; i++)
		put_insn(g, c, loc);
}

/* An entry's length, 32-bit or (rarely) 64-bit DWARF, patched once the body is written. */
static size_t begin_entry(gen *g, bool dwarf64)
{
	if (dwarf64) {
		put_u(g, 0xffffffffu, 4);
		put_u(g, 0, 8);
		return g->len - 8;
	}
	put_u(g, 0, 4);
	return g->len - 4;
}

static void end_entry(gen *g, size_t at, bool dwarf64, bool pad)
{
	while (pad && (g->len - at) % (dwarf64 ? 8 : 4))
		put_u(g, 0, 1); /* DW_CFA_nop */
	uint64_t len = g->len - at - (dwarf64 ? 8 : 4);
	if (dwarf64)
		for (int i = 0; i < 8; i++)
			g->out[at + (size_t)i] = (uint8_t)(len >> (8 * i));
	else
		patch_u32(g, at, (uint32_t)len);
}

/* An encoded pointer as an FDE holds it (pc_begin is pcrel for the usual 0x1b). */
static void put_ptr(gen *g, const section *s, uint8_t enc, uint64_t v, bool begin)
{
	uint64_t pos = s->addr + g->len;

	if (begin && (enc & 0x70) == 0x10)
		v -= pos;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: put_u(g, v, 8); break;
	case 0x02: case 0x0a: put_u(g, v, 2); break;
	case 0x03: case 0x0b: put_u(g, v, 4); break;
	case 0x01: put_uleb(g, v); break;
	case 0x09: put_sleb(g, (int64_t)v); break;
	default: put_u(g, v, 4); break; /* an encoding cfi.c refuses anyway */
	}
}

static void put_cie(gen *g, section *s)
{
	static const char *const augs[] = { "zR", "", "zPLR", "zR", "zRS", "zLR", "eh", "zPR", "zRB",
					    "zX", "Q" };
	static const uint8_t encs[] = { 0x1b, 0x03, 0x00, 0x1b, 0x0b, 0x04, 0x0a, 0x01, 0x09, 0x1c,
					0x20, 0x50, 0xff };
	cie_info *c = &s->cies[s->ncies++];
	const char *aug = s->is_eh ? augs[choose(g, DT_ARRAY_SIZE(augs))] : choose(g, 4) ? "" : "zR";
	size_t at;

	memset(c, 0, sizeof(*c));
	c->off = g->len;
	c->dwarf64 = choose(g, 16) == 15;
	c->version = (uint8_t[]){ 1, 1, 3, 4, 1, 2 }[choose(g, 6)];
	c->addr_size = 8;
	c->fde_enc = s->is_eh && strchr(aug, 'R') ? encs[choose(g, sizeof(encs))] : 0x00;
	at = begin_entry(g, c->dwarf64);
	if (s->is_eh)
		put_u(g, 0, c->dwarf64 ? 8 : 4);
	else
		put_u(g, c->dwarf64 ? ~0ull : 0xffffffffu, c->dwarf64 ? 8 : 4);
	put_u(g, c->version, 1);
	put(g, aug, strlen(aug) + 1);
	if (c->version == 4) {
		c->addr_size = (uint8_t[]){ 8, 4, 2 }[choose(g, 3)];
		put_u(g, c->addr_size, 1);
		put_u(g, 0, 1);
	}
	put_uleb(g, choose(g, 16) ? 1 : 4 * choose(g, 2)); /* code alignment, 0 now and then */
	put_sleb(g, (int64_t[]){ -8, -8, -4, 8, 1 }[choose(g, 5)]);
	if (c->version == 1)
		put_u(g, choose(g, 8) ? 16 : reg(g), 1);
	else
		put_uleb(g, choose(g, 8) ? 16 : reg(g));
	if (aug[0] == 'z') {
		gen a = { .in = g->in };
		c->z = true;
		for (const char *p = aug + 1; *p; p++) {
			if (*p == 'R') {
				put_u(&a, c->fde_enc, 1);
			} else if (*p == 'L') {
				c->lsda = true;
				c->lsda_enc = choose(&a, 2) ? 0x1b : 0x00;
				put_u(&a, c->lsda_enc, 1);
			} else if (*p == 'P') {
				uint8_t enc = (uint8_t[]){ 0x9b, 0x00, 0x03, 0x50 }[choose(&a, 4)];
				put_u(&a, enc, 1);
				put_ptr(&a, s, enc & 0x7f, 0x1234, false);
			} else if (*p == 'X') {
				put_u(&a, 0xaa, 1);
			}
		}
		put_uleb(g, choose(g, 16) ? a.len : a.len + 100);
		put(g, a.out, a.len);
		free(a.out);
	} else if (!strcmp(aug, "eh")) {
		put_u(g, 0, 8);
	}
	/* The usual initial state, then maybe more. */
	if (choose(g, 8)) {
		static const uint8_t init[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
		put(g, init, sizeof(init));
	}
	uint64_t loc = 0;
	put_insns(g, c, &loc, 2);
	end_entry(g, at, c->dwarf64, s->is_eh);
}

static void put_fde(gen *g, section *s, const cie_info *c)
{
	bool dwarf64 = c->dwarf64;
	size_t at = begin_entry(g, dwarf64), id_pos = g->len;
	uint64_t pc, range, loc;

	/* The CIE pointer: .eh_frame counts back from here, .debug_frame from the start. */
	if (choose(g, 32) == 31)
		put_u(g, choose(g, 2) ? id_pos + 4 : 0x7fffffff, dwarf64 ? 8 : 4);
	else
		put_u(g, s->is_eh ? id_pos - c->off : c->off, dwarf64 ? 8 : 4);
	switch (choose(g, 10)) {
	case 0: pc = s->pc - 0x100; break;                  /* out of order */
	case 1: pc = choose(g, 2) ? 0 : 0xfffffff0ull; break; /* discarded; near 4 GiB */
	default: pc = s->pc; break;
	}
	range = choose(g, 12) ? 8 + choose(g, 256) : choose(g, 2) ? 0 : 1ull << 33;
	s->pc = pc + range + (choose(g, 4) ? 0 : 16);
	if (s->is_eh) {
		put_ptr(g, s, c->fde_enc, pc, true);
		put_ptr(g, s, c->fde_enc & 0x0f, range, false);
	} else {
		put_u(g, pc, c->addr_size == 4 ? 4 : c->addr_size == 2 ? 2 : 8);
		put_u(g, range, c->addr_size == 4 ? 4 : c->addr_size == 2 ? 2 : 8);
	}
	if (c->z) {
		if (c->lsda) {
			put_uleb(g, c->lsda_enc == 0x1b ? 4 : 8);
			put_ptr(g, s, c->lsda_enc, 0, false);
		} else {
			put_uleb(g, choose(g, 16) ? 0 : 200);
		}
	}
	loc = pc;
	put_insns(g, c, &loc, 12);
	end_entry(g, at, dwarf64, s->is_eh);
}

/* A whole section into g->out (appended), loaded at `addr`. */
static void put_section(gen *g, bool is_eh, uint64_t addr)
{
	section s = { .is_eh = is_eh, .addr = addr, .pc = 0x1000 };
	unsigned ncies = 1 + choose(g, 3);

	for (unsigned i = 0; i < ncies; i++) {
		put_cie(g, &s);
		unsigned nfde = choose(g, 7);
		for (unsigned j = 0; j < nfde; j++)
			/* Mostly the CIE just written; sometimes an earlier one. */
			put_fde(g, &s, &s.cies[choose(g, 4) ? s.ncies - 1 : choose(g, s.ncies)]);
	}
	if (is_eh && choose(g, 2))
		put_u(g, 0, 4); /* the terminator */
	if (choose(g, 16) == 15)
		put_u(g, 0xdeadbeef, 4); /* trailing garbage */
}

/* ---------------------------------------------------------------- ELF images */

#define EH_ADDR 0x2000

/* Appends a section's bytes at an 8-aligned offset; returns the offset. */
static size_t put_data(gen *img, const void *b, size_t n)
{
	while (img->len % 8)
		put_u(img, 0, 1);
	size_t off = img->len;
	put(img, b, n);
	return off;
}

/* An ELF image around generated sections: the choices in `g` decide which sections there are
 * and whether one header field is broken. */
static void put_elf(gen *g, gen *img)
{
	gen eh = { .in = g->in };
	Elf64_Shdr sh[8];
	char shstr[128];
	size_t nsh = 1, shstr_len = 1, shoff;
	Elf64_Ehdr eh_hdr;
	Elf64_Phdr ph[2];
	unsigned what = choose(g, 64);

	memset(sh, 0, sizeof(sh));
	shstr[0] = 0;
#define SECTION_NAME(name) (memcpy(shstr + shstr_len, name, sizeof(name)), \
			    shstr_len += sizeof(name), (Elf64_Word)(shstr_len - sizeof(name)))
	put(img, (uint8_t[sizeof(Elf64_Ehdr) + sizeof(ph)]){ 0 }, sizeof(Elf64_Ehdr) + sizeof(ph));
	if (!(what & 1)) {
		put_section(&eh, true, EH_ADDR);
		sh[nsh] = (Elf64_Shdr){ .sh_name = SECTION_NAME(".eh_frame"),
					.sh_type = (what & 8) == 8 && (what & 16) ? SHT_NOBITS
										  : SHT_PROGBITS,
					.sh_flags = SHF_ALLOC, .sh_addr = EH_ADDR,
					.sh_offset = put_data(img, eh.out, eh.len), .sh_size = eh.len,
					.sh_addralign = 8 };
		nsh++;
	}
	if (what & 2) {
		gen dbg = { .in = g->in };
		put_section(&dbg, false, 0);
		sh[nsh] = (Elf64_Shdr){ .sh_name = SECTION_NAME(".debug_frame"),
					.sh_type = SHT_PROGBITS, .sh_addralign = 8 };
		if (what & 4) {
			/* SHF_COMPRESSED: a compression header, then the zlib stream. */
			uLongf zl = compressBound(dbg.len);
			uint8_t *z = xmalloc(sizeof(Elf64_Chdr) + zl);
			Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = dbg.len,
					  .ch_addralign = 8 };
			compress2(z + sizeof(ch), &zl, dbg.out ? dbg.out : (uint8_t *)"", dbg.len, 1);
			memcpy(z, &ch, sizeof(ch));
			if ((what & 48) == 48)
				z[sizeof(ch) + zl / 2] ^= 0x55; /* a broken stream */
			sh[nsh].sh_flags = SHF_COMPRESSED;
			sh[nsh].sh_offset = put_data(img, z, sizeof(ch) + zl);
			sh[nsh].sh_size = sizeof(ch) + zl;
			free(z);
		} else {
			sh[nsh].sh_offset = put_data(img, dbg.out, dbg.len);
			sh[nsh].sh_size = dbg.len;
		}
		free(dbg.out);
		nsh++;
	}
	if (what & 32) {
		static const uint8_t note[] = { 4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
						1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
						16, 17, 18, 19, 20 };
		static const char link[] = "fuzz.debug\0\0\x12\x34\x56\x78";
		sh[nsh++] = (Elf64_Shdr){ .sh_name = SECTION_NAME(".note.gnu.build-id"),
					  .sh_type = SHT_NOTE, .sh_offset = put_data(img, note, sizeof(note)),
					  .sh_size = sizeof(note), .sh_addralign = 4 };
		sh[nsh++] = (Elf64_Shdr){ .sh_name = SECTION_NAME(".gnu_debuglink"),
					  .sh_type = SHT_PROGBITS,
					  .sh_offset = put_data(img, link, sizeof(link) - 1),
					  .sh_size = sizeof(link) - 1, .sh_addralign = 4 };
	}
	Elf64_Word shstr_name = SECTION_NAME(".shstrtab");
	sh[nsh++] = (Elf64_Shdr){ .sh_name = shstr_name, .sh_type = SHT_STRTAB,
				  .sh_offset = put_data(img, shstr, shstr_len), .sh_size = shstr_len,
				  .sh_addralign = 1 };
#undef SECTION_NAME
	shoff = put_data(img, sh, nsh * sizeof(Elf64_Shdr));
	memset(&eh_hdr, 0, sizeof(eh_hdr));
	memcpy(eh_hdr.e_ident, ELFMAG, SELFMAG);
	eh_hdr.e_ident[EI_CLASS] = ELFCLASS64;
	eh_hdr.e_ident[EI_DATA] = ELFDATA2LSB;
	eh_hdr.e_ident[EI_VERSION] = EV_CURRENT;
	eh_hdr.e_type = ET_DYN;
	eh_hdr.e_machine = EM_X86_64;
	eh_hdr.e_version = EV_CURRENT;
	eh_hdr.e_phoff = sizeof(eh_hdr);
	eh_hdr.e_shoff = shoff;
	eh_hdr.e_ehsize = sizeof(eh_hdr);
	eh_hdr.e_phentsize = sizeof(Elf64_Phdr);
	eh_hdr.e_phnum = 2;
	eh_hdr.e_shentsize = sizeof(Elf64_Shdr);
	eh_hdr.e_shnum = (Elf64_Half)nsh;
	eh_hdr.e_shstrndx = (Elf64_Half)(nsh - 1);
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			      .p_vaddr = 0, .p_filesz = img->len, .p_memsz = img->len,
			      .p_align = 0x1000 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x1000,
			      .p_vaddr = 0x201000, .p_filesz = 0x100, .p_memsz = 0x2000,
			      .p_align = 0x1000 };
	switch (choose(g, 24)) {
	/* One broken field now and then: what libelf and elfobj.c must turn away. */
	case 0: eh_hdr.e_shstrndx = 200; break;
	case 1: eh_hdr.e_shoff = img->len + 1000; break;
	case 2: eh_hdr.e_ident[EI_CLASS] = ELFCLASS32; break;
	case 3: sh[1].sh_offset = img->len * 4 + 0x10000; memcpy(img->out + shoff, sh, nsh * sizeof(*sh)); break;
	case 4: sh[1].sh_size = ~0ull >> 4; memcpy(img->out + shoff, sh, nsh * sizeof(*sh)); break;
	case 5: sh[nsh - 1].sh_size = 3; memcpy(img->out + shoff, sh, nsh * sizeof(*sh)); break;
	case 6: eh_hdr.e_phnum = 0xffff; break;
	case 7: ph[0].p_offset = ~0ull; break;
	}
	memcpy(img->out, &eh_hdr, sizeof(eh_hdr));
	memcpy(img->out + sizeof(eh_hdr), ph, sizeof(ph));
	free(eh.out);
}

/* ---------------------------------------------------------------- the harness */

static void check_rows(const dt_ruleset *rs, const dt_rows *rows)
{
	char buf[128];

	for (uint32_t i = 0; i < rows->n; i++) {
		if (rows->rule[i] >= rs->n || (i && rows->pc[i] <= rows->pc[i - 1]) ||
		    (i && rows->rule[i] == rows->rule[i - 1]))
			abort();
	}
	for (uint32_t i = 0; i < rs->n; i++)
		dt_rule_format(&rs->rules[i], buf, sizeof(buf));
}

static int count_sym(void *ctx, const dt_elf_sym *s)
{
	(*(size_t *)ctx) += strlen(s->name);
	return 0;
}

/* An ELF image: its CFI (no cache, so no --debuginfo dirs), and what else elfproc/ reads. */
static void elf_image(const void *buf, size_t len, dt_ruleset *rs, dt_rows *rows, char *err,
		      size_t errlen)
{
	dt_elf *e = dt_elf_open_mem(buf, len, "fuzz");
	const dt_elf_seg *segs;
	const uint8_t *id;
	size_t n, names = 0;
	uint64_t off;
	dt_elf_sym sym;

	if (!e)
		return;
	dt_cfi_build(NULL, e, rs, rows, err, errlen);
	segs = dt_elf_segments(e, &n);
	for (size_t i = 0; i < n; i++)
		dt_elf_vaddr_to_offset(e, segs[i].vaddr + segs[i].filesz / 2, &off);
	dt_elf_ident(e);
	dt_elf_build_id(e, &id);
	dt_elf_debuglink(e);
	dt_elf_sym_each(e, count_sym, &names);
	dt_elf_sym_find(e, "main", &sym);
	dt_elf_put(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	choices in = { .p = data + 1, .n = size ? size - 1 : 0 };
	gen g = { .in = &in }, img = { .in = &in };
	char err[256];
	dt_ruleset rs;
	dt_rows rows = { 0 };
	const uint8_t *body = data + 1;
	size_t len = size ? size - 1 : 0;

	if (size < 1)
		return 0;
	dt_ruleset_init(&rs);
	switch (data[0] % 6) {
	case 0: dt_cfi_parse(body, len, 0x1000, true, &rs, &rows, err, sizeof(err)); break;
	case 1: dt_cfi_parse(body, len, 0, false, &rs, &rows, err, sizeof(err)); break;
	case 2: elf_image(body, len, &rs, &rows, err, sizeof(err)); break;
	case 3: case 4: {
		bool is_eh = data[0] % 6 == 3;
		put_section(&g, is_eh, is_eh ? EH_ADDR : 0);
		dt_cfi_parse(g.out, g.len, is_eh ? EH_ADDR : 0, is_eh, &rs, &rows, err, sizeof(err));
		break;
	}
	default:
		put_elf(&g, &img);
		elf_image(img.out, img.len, &rs, &rows, err, sizeof(err));
		break;
	}
	check_rows(&rs, &rows);
	free(g.out);
	free(img.out);
	dt_rows_fini(&rows);
	dt_ruleset_fini(&rs);
	return 0;
}

#ifndef DT_LIBFUZZER
int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		char *buf;
		size_t len;

		if (dt_read_file(argv[i], &buf, &len) < 0)
			return 1;
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		free(buf);
	}
	return 0;
}
#endif
