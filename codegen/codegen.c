/* codegen.c — the driver: one LLVM context and module per dt_codegen call (the BPF target
 * machine is made once and kept); one function per (probe, set of attach points) in its own ELF
 * section (plus a continuation when the probe uses ustack_dwarf, plus one per later part of a
 * probe too large for one program: cg_split.c), verified, optimised by the function passes the
 * verifier needs (CG_PASSES), emitted as an object in memory, and split back into instruction
 * arrays by section. Errors LLVM reports through its diagnostic handler (the BPF backend's
 * "unsupported" messages) become diagnostics instead of killing the process. */
#include "codegen/cg_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* The optimisation pipeline. The verifier wants tidy code: allocas promoted (sroa), repeated
 * loads and map references merged (early-cse), constants folded (instcombine), the blocks of
 * guards merged (simplifycfg). That is all our code has to gain: it has no calls to inline, no
 * loops, nothing to vectorise, so the rest of LLVM's O2 (the inliner's repeated simplification,
 * IPO, loop and vector passes) ran for nothing: for 4,000 statements (tests/tools/gen_script.py
 * stmts 4000), 4 to 5 times less time in these passes than in O2's, for 6.5% more BPF
 * instructions. Neither dse nor early-cse's MemorySSA pay either: without them these passes
 * take about 35% less CPU (DT_CG_TIMES=1, 1,000 statements: 137 -> 90 ms) for 1.2% more BPF
 * instructions (19,353 -> 19,593), and the BPF backend's time is the same. */
#define CG_PASSES "function(sroa,early-cse,simplifycfg,instcombine,simplifycfg)"

static bool llvm_ready, llvm_gone;

/* The BPF target machine, made once per thread and kept: creating one (its subtarget's lowering
 * tables) was about 4% of fuzz_codegen's time per input (perf), a third of the smallest
 * script's. A target machine holds no state of a compilation; contexts and modules stay per
 * call. */
static __thread LLVMTargetMachineRef tm_kept;

static void llvm_init(void)
{
	if (llvm_ready || llvm_gone)
		return;
	LLVMInitializeBPFTargetInfo();
	LLVMInitializeBPFTarget();
	LLVMInitializeBPFTargetMC();
	LLVMInitializeBPFAsmPrinter();
	LLVMInitializeBPFAsmParser(); /* cg_ctx_load's inline assembly */
	llvm_ready = true;
}

void dt_codegen_shutdown(void)
{
	/* LLVM cannot be initialised again after LLVMShutdown: later dt_codegen calls fail. */
	if (tm_kept)
		LLVMDisposeTargetMachine(tm_kept);
	tm_kept = NULL;
	if (llvm_ready)
		LLVMShutdown();
	llvm_ready = false;
	llvm_gone = true;
}

void dt_cg_result_free(dt_cg_result *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->nprogs; i++) {
		free(r->progs[i].insns);
		free(r->progs[i].func_offs);
	}
	free(r->progs);
	free(r->ir);
	free(r->asm_text);
	free(r);
}

enum bpf_prog_type cg_prog_type_of(dt_provider p)
{
	switch (p) {
	case DT_P_BEGIN: case DT_P_END: case DT_P_SELF: /* test-run by dwarftrace */
		return BPF_PROG_TYPE_RAW_TRACEPOINT;
	case DT_P_TEST: case DT_P_BENCH:
		/* Test-run too, but repeated and timed by the kernel: raw tracepoint programs
		 * cannot be (bpftrace runs these as XDP programs too). */
		return BPF_PROG_TYPE_XDP;
	case DT_P_INTERVAL: case DT_P_PROFILE: case DT_P_SOFTWARE: case DT_P_HARDWARE:
	case DT_P_WATCHPOINT: case DT_P_ASYNCWATCHPOINT: /* the breakpoint's perf event */
		return BPF_PROG_TYPE_PERF_EVENT;
	case DT_P_UPROBE: case DT_P_URETPROBE: case DT_P_KPROBE: case DT_P_KRETPROBE:
	case DT_P_XPROBE: /* tail-called by the precompiled uretprobe: bpf-lib/dt_xprobe.h */
	case DT_P_USDT:
		return BPF_PROG_TYPE_KPROBE;
	case DT_P_TRACEPOINT:
		return BPF_PROG_TYPE_TRACEPOINT;
	case DT_P_RAWTRACEPOINT:
		return BPF_PROG_TYPE_RAW_TRACEPOINT;
	case DT_P_FENTRY: case DT_P_FEXIT: case DT_P_ITER:
		return BPF_PROG_TYPE_TRACING;
	default:
		return BPF_PROG_TYPE_UNSPEC;
	}
}

enum bpf_prog_type cg_prog_type_at(const dt_probe *pr, const dt_attach *a)
{
	if (a->provider == DT_P_RAWTRACEPOINT && pr->rawtp_btf)
		return BPF_PROG_TYPE_TRACING;
	return cg_prog_type_of(a->provider);
}

static const char *short_name(dt_provider p)
{
	switch (p) {
	case DT_P_BEGIN: return "begin";
	case DT_P_END: return "end";
	case DT_P_INTERVAL: return "interval";
	case DT_P_PROFILE: return "profile";
	case DT_P_UPROBE: return "uprobe";
	case DT_P_URETPROBE: return "uretprobe";
	case DT_P_KPROBE: return "kprobe";
	case DT_P_KRETPROBE: return "kretprobe";
	case DT_P_TRACEPOINT: return "tp";
	case DT_P_SOFTWARE: return "sw";
	case DT_P_HARDWARE: return "hw";
	case DT_P_XPROBE: return "xprobe";
	case DT_P_USDT: return "usdt";
	case DT_P_WATCHPOINT: return "wp";
	case DT_P_ASYNCWATCHPOINT: return "awp";
	case DT_P_RAWTRACEPOINT: return "rawtp";
	case DT_P_FENTRY: return "fentry";
	case DT_P_FEXIT: return "fexit";
	case DT_P_ITER: return "iter";
	case DT_P_SELF: return "self";
	case DT_P_TEST: return "test";
	case DT_P_BENCH: return "bench";
	default: return "x";
	}
}

typedef struct llvm_diag {
	char *msg;
} llvm_diag;

static void diag_handler(LLVMDiagnosticInfoRef di, void *ctx)
{
	llvm_diag *ld = ctx;

	if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || ld->msg)
		return;
	char *m = LLVMGetDiagInfoDescription(di);

	ld->msg = xstrdup(m);
	LLVMDisposeMessage(m);
}

typedef struct plan {
	dt_cg_prog prog;
	char section[48];
	const cg_split *split; /* the probe's parts (nparts 0: whole) */
	uint32_t part;         /* which of them this program runs */
	int next_slot;         /* the next part's chain slot; -1 */
} plan;

typedef DT_VEC(plan) plan_vec;

static void set_types(cg *c)
{
	c->i1 = LLVMInt1TypeInContext(c->ctx);
	c->i8 = LLVMInt8TypeInContext(c->ctx);
	c->i16 = LLVMInt16TypeInContext(c->ctx);
	c->i32 = LLVMInt32TypeInContext(c->ctx);
	c->i64 = LLVMInt64TypeInContext(c->ctx);
	c->i8p = LLVMPointerType(c->i8, 0);
	LLVMTypeRef pa[2] = { c->i64, c->i64 };
	c->pseudo_ty = LLVMFunctionType(c->i64, pa, 2, false);
	c->pseudo_fn = LLVMAddFunction(c->mod, "llvm.bpf.pseudo", c->pseudo_ty);
}

bool dt_cg_same_set(const dt_attach *a, const dt_attach *b)
{
	if (a->provider != b->provider || a->own_prog || b->own_prog ||
	    (!a->target) != (!b->target) || (a->target && strcmp(a->target, b->target)))
		return false;
	return a->provider == DT_P_UPROBE || a->provider == DT_P_URETPROBE ||
	       a->provider == DT_P_TRACEPOINT;
}

/* The later parts of probe i at attach point j, after the plan at `first` (the entry or the
 * continuation, which runs part 0): each reserves its slot in the chain's prog array, which
 * the part before it tail-calls. */
static int plan_parts(cg *c, plan_vec *v, size_t first, uint32_t i, uint32_t j)
{
	const cg_split *sp = v->v[first].split;
	size_t prev = first;

	for (uint32_t k = 1; k < sp->nparts; k++) {
		int slot = c->env->chain_slot ? c->env->chain_slot(c->env->ctx) : -ENOSPC;
		plan pl = v->v[first];
		char nm[64];

		if (slot < 0) {
			dt_diag(c->diags, DT_DIAG_ERROR, pl.prog.probe->span,
				"no chain slot for the parts of this probe (%d)", slot);
			return -EINVAL;
		}
		pl.prog.is_continuation = false;
		pl.prog.cont_slot = -1;
		pl.prog.chain_slot = slot;
		pl.part = k;
		pl.next_slot = -1;
		snprintf(nm, sizeof(nm), "p%u_part%u", i, k);
		memset(pl.prog.name, 0, sizeof(pl.prog.name));
		memcpy(pl.prog.name, nm, DT_MIN(strlen(nm), sizeof(pl.prog.name) - 1));
		snprintf(pl.section, sizeof(pl.section), "dt/p%u_a%u_k%u", i, j, k);
		v->v[prev].next_slot = slot;
		DT_VEC_PUSH(v, pl);
		prev = v->n - 1;
	}
	return 0;
}

/* Decides the programs: one per probe × set of attach points, plus a continuation for ustack_dwarf, plus the
 * later parts of a probe in parts (splits[i] is probe i's plan). */
static int plan_programs(cg *c, const cg_split *splits, plan **out, uint32_t *n)
{
	const dt_program *p = c->prog;
	plan_vec v = { 0 };

	for (uint32_t i = 0; i < p->nprobes; i++) {
		const dt_probe *pr = p->probes[i];

		for (uint32_t j = 0, k; j < pr->nattach; j = k) {
			const dt_attach *a = pr->attach[j];
			plan pl = { 0 };

			for (k = j + 1; k < pr->nattach && dt_cg_same_set(a, pr->attach[k]); k++)
				;
			pl.prog.probe = pr;
			pl.prog.attach = a;
			pl.prog.set = (const dt_attach *const *)&pr->attach[j];
			pl.prog.nset = k - j;
			pl.prog.prog_type = cg_prog_type_at(pr, a);
			pl.prog.expected_attach_type =
				a->provider == DT_P_FENTRY	  ? BPF_TRACE_FENTRY
				: a->provider == DT_P_FEXIT	  ? BPF_TRACE_FEXIT
				: a->provider == DT_P_ITER	  ? BPF_TRACE_ITER
				: pl.prog.prog_type == BPF_PROG_TYPE_TRACING ? BPF_TRACE_RAW_TP
								      : 0;
			pl.prog.cont_slot = -1;
			pl.prog.chain_slot = -1;
			pl.split = &splits[i];
			pl.next_slot = -1;
			if (pl.prog.prog_type == BPF_PROG_TYPE_UNSPEC) {
				dt_diag(c->diags, DT_DIAG_ERROR, a->span,
					"probe type '%s' cannot be compiled yet",
					dt_provider_name(a->provider));
				goto fail;
			}
			char nm[64] = { 0 };

			snprintf(nm, sizeof(nm), "p%u_%s", i, short_name(a->provider));
			memcpy(pl.prog.name, nm, sizeof(pl.prog.name) - 1);
			snprintf(pl.section, sizeof(pl.section), "dt/p%u_a%u", i, j);
			if (pr->uses_ustack_dwarf) {
				int slot = c->env->cont_slot ? c->env->cont_slot(c->env->ctx) : -ENOSPC;
				plan cont = pl;

				if (slot < 0) {
					dt_diag(c->diags, DT_DIAG_ERROR, pr->span,
						"no continuation slot for ustack_dwarf (%d)", slot);
					goto fail;
				}
				pl.prog.cont_slot = slot;
				cont.prog.is_continuation = true;
				cont.prog.cont_slot = slot;
				snprintf(nm, sizeof(nm), "p%u_cont", i);
				memcpy(cont.prog.name, nm, sizeof(cont.prog.name) - 1);
				snprintf(cont.section, sizeof(cont.section), "dt/p%u_a%u_c", i, j);
				DT_VEC_PUSH(&v, pl);
				pl = cont;
			}
			/* The entry, or the continuation, runs the body or its first part. */
			DT_VEC_PUSH(&v, pl);
			if (plan_parts(c, &v, v.n - 1, i, j) < 0)
				goto fail;
		}
	}
	*out = v.v;
	*n = (uint32_t)v.n;
	return 0;
fail:
	free(v.v);
	return -EINVAL;
}

/* DT_CG_TIMES=1: the CPU time of each stage of a compile on stderr (emitting the IR, the
 * function passes, the BPF backend), for measuring the compiler (docs/DESIGN.md). */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static LLVMTargetMachineRef make_tm(char **err)
{
	LLVMTargetRef t;

	if (tm_kept)
		return tm_kept;
	if (LLVMGetTargetFromTriple("bpfel", &t, err))
		return NULL;
	tm_kept = LLVMCreateTargetMachine(t, "bpfel", "v3", "", LLVMCodeGenLevelDefault,
					  LLVMRelocStatic, LLVMCodeModelDefault);
	return tm_kept;
}

/* One attempt at compiling the planned programs with `budget` bytes of stack for buffers.
 * *stack_full is set (and nothing reported) when the BPF backend ran out of stack, so that the
 * caller can retry with more of the buffers in scratch memory. */
static int compile(const dt_program *p, const dt_cg_env *env, const plan *plans, uint32_t nplans,
		   uint32_t budget, dt_cg_result **out, dt_diags *d, bool *stack_full)
{
	cg c = { .prog = p, .env = env, .diags = d, .stack_budget = budget, .budget0 = budget };
	llvm_diag ld = { 0 };
	LLVMTargetMachineRef tm = NULL;
	LLVMTargetDataRef td = NULL;
	LLVMMemoryBufferRef obj = NULL;
	LLVMPassBuilderOptionsRef pbo = NULL;
	dt_cg_result *r = NULL;
	const char **calls_c = NULL; /* by plan: the .bpf.c whose code it runs (dt_cg_prog.imported_c) */
	char *err = NULL;
	dt_span at0 = p->nprobes ? p->probes[0]->span : (dt_span){ 0, 0 };
	bool times = getenv("DT_CG_TIMES") != NULL;
	double t0 = times ? cpu_ms() : 0, t_ir = 0, t_pass = 0;
	int ret;

	*out = NULL;
	*stack_full = false;
	c.ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(c.ctx, diag_handler, &ld);
	c.mod = LLVMModuleCreateWithNameInContext("dwarftrace", c.ctx);
	c.b = LLVMCreateBuilderInContext(c.ctx);
	set_types(&c);
	tm = make_tm(&err);
	if (!tm) {
		dt_diag(d, DT_DIAG_ERROR, at0, "LLVM has no BPF target: %s", err ? err : "?");
		ret = -ENOTSUP;
		goto out_llvm;
	}
	LLVMSetTarget(c.mod, "bpfel");
	td = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(c.mod, td);

	calls_c = xcalloc(nplans + 1, sizeof(*calls_c));
	for (uint32_t i = 0; i < nplans && !c.err; i++) {
		const dt_cg_prog *pg = &plans[i].prog;

		c.calls_c = NULL;
		cg_emit_program(&c, pg, plans[i].section, plans[i].split, plans[i].part,
				plans[i].next_slot);
		calls_c[i] = c.calls_c;
	}
	if (c.err) {
		ret = c.err;
		goto out_llvm;
	}
	if (LLVMVerifyModule(c.mod, LLVMReturnStatusAction, &err)) {
		if (getenv("DT_CG_DEBUG"))
			LLVMDumpModule(c.mod);
		dt_diag(d, DT_DIAG_ERROR, at0, "internal code generation error: invalid IR: %s", err);
		ret = -EINVAL;
		goto out_llvm;
	}
	LLVMDisposeMessage(err);
	err = NULL;
	if (times)
		t_ir = cpu_ms();
	pbo = LLVMCreatePassBuilderOptions();
	char *passes = xasprintf("%s" CG_PASSES, cg_link_passes(&c) ? cg_link_passes(&c) : "");
	LLVMErrorRef lerr = LLVMRunPasses(c.mod, passes, tm, pbo);
	free(passes);
	if (lerr) {
		char *m = LLVMGetErrorMessage(lerr);

		dt_diag(d, DT_DIAG_ERROR, at0, "internal code generation error: %s", m);
		LLVMDisposeErrorMessage(m);
		ret = -EINVAL;
		goto out_llvm;
	}
	if (cg_link_check(&c)) {
		ret = -EINVAL;
		goto out_llvm;
	}
	if (times)
		t_pass = cpu_ms();
	r = xcalloc(1, sizeof(*r));
	if (env->want_ir) {
		char *ir = LLVMPrintModuleToString(c.mod);

		r->ir = xstrdup(ir);
		LLVMDisposeMessage(ir);
	}
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, c.mod, LLVMObjectFile, &err, &obj) || ld.msg) {
		if (ld.msg && strstr(ld.msg, "stack limit") && budget > 0) {
			*stack_full = true;
			ret = -E2BIG;
			goto out_result;
		}
		dt_diag(d, DT_DIAG_ERROR, at0, "internal code generation error: BPF backend: %s",
			ld.msg ? ld.msg : err ? err : "?");
		ret = -EINVAL;
		goto out_result;
	}
	if (times)
		fprintf(stderr, "codegen cpu: ir %.0f ms, passes %.0f ms, backend %.0f ms "
			"(stack budget %u)\n", t_ir - t0, t_pass - t_ir, cpu_ms() - t_pass, budget);
	if (getenv("DT_CG_OBJ")) {
		/* Debugging aid: the object as LLVM emitted it, for llvm-objdump. */
		FILE *f = fopen(getenv("DT_CG_OBJ"), "w");

		if (f) {
			fwrite(LLVMGetBufferStart(obj), 1, LLVMGetBufferSize(obj), f);
			fclose(f);
		}
	}
	r->progs = xcalloc(nplans ? nplans : 1, sizeof(*r->progs));
	size_t asm_len = 0;

	for (uint32_t i = 0; i < nplans; i++) {
		struct bpf_insn *insns;
		size_t n;
		const char *missing = NULL;

		ret = cg_elf_section(LLVMGetBufferStart(obj), LLVMGetBufferSize(obj), plans[i].section,
				     env, &insns, &n, &missing);
		if (ret && missing) {
			dt_diag(d, DT_DIAG_ERROR, plans[i].prog.probe->span,
				"the program calls the kernel function %s, which %s", missing,
				ret == -ENOENT ? "this kernel's BTF does not have"
					       : "dwarftrace cannot look up here");
			ret = -EINVAL;
			goto out_result;
		}
		if (ret) {
			dt_diag(d, DT_DIAG_ERROR, plans[i].prog.probe->span,
				"internal code generation error: section %s: %s", plans[i].section,
				ret == -ENOTSUP ? "needs relocation" : dt_strerror(-ret));
			ret = -EINVAL;
			goto out_result;
		}
		if (n > CG_MAX_JUMP) {
			dt_diag(d, DT_DIAG_ERROR, plans[i].prog.probe->span,
				"internal code generation error: program %s came out at %zu "
				"instructions, more than BPF jumps can span (%d)", plans[i].prog.name,
				n, CG_MAX_JUMP);
			dt_diag_hint(d, "this is a dwarftrace bug; please report it with the script");
			free(insns);
			ret = -EINVAL;
			goto out_result;
		}
		r->progs[i] = plans[i].prog;
		r->progs[i].imported_c = calls_c[i];
		r->progs[i].insns = insns;
		r->progs[i].ninsns = n;
		cg_func_starts(insns, n, &r->progs[i].func_offs, &r->progs[i].nfuncs);
		r->nprogs = i + 1;
		if (env->want_asm) {
			char title[96];

			snprintf(title, sizeof(title), "%s (%s%s)", r->progs[i].name,
				 plans[i].prog.attach->text ? plans[i].prog.attach->text : "?",
				 plans[i].prog.is_continuation ? ", continuation" : "");
			cg_disasm(r->progs[i].insns, r->progs[i].ninsns, title, &r->asm_text,
				  &asm_len);
		}
	}
	*out = r;
	r = NULL;
	ret = 0;
out_result:
	dt_cg_result_free(r);
out_llvm:
	if (obj)
		LLVMDisposeMemoryBuffer(obj);
	if (pbo)
		LLVMDisposePassBuilderOptions(pbo);
	if (err)
		LLVMDisposeMessage(err);
	free(ld.msg);
	free(calls_c);
	free(c.vars);
	free(c.slots.v);
	for (size_t i = 0; i < c.linked.n; i++)
		free(c.linked.v[i].name);
	free(c.linked.v);
	LLVMDisposeBuilder(c.b);
	LLVMDisposeModule(c.mod);
	if (td)
		LLVMDisposeTargetData(td);
	LLVMContextDispose(c.ctx);
	return ret;
}

/* Compiles plans[0..nplans) with the largest stack budget for buffers that fits. */
static int compile_fitting(const dt_program *p, const dt_cg_env *env, const plan *plans,
			   uint32_t nplans, dt_cg_result **out, dt_diags *d)
{
	/* Stack bytes for buffers per attempt: the rest goes to the per-CPU scratch map. LLVM's
	 * own spills share the 512 bytes, so a program with many live values gets less. A smaller
	 * budget follows an attempt that ran out of stack (-E2BIG, said by nobody): the last
	 * attempt, with no budget, reports it if even that is too much. */
	static const uint32_t budgets[] = { CG_STACK_BUDGET, 96, 0 };
	bool stack_full = false;
	int ret = 0;

	for (unsigned i = 0; i < DT_ARRAY_SIZE(budgets); i++) {
		ret = compile(p, env, plans, nplans, budgets[i], out, d, &stack_full);
		if (!stack_full)
			break;
	}
	return ret;
}

/* A large script is compiled by several threads, each with its own LLVM context and module for a
 * run of consecutive programs (programs share nothing in the object: map references are fds),
 * since LLVM's time is nearly all per function (the BPF backend about 80% of it: instruction
 * selection, then the object writer). A job gets at least CG_JOB_BYTES of probe source, so a
 * small script stays in one module on the calling thread; DT_CG_THREADS=N caps the threads (1:
 * none), else the CPUs this process may run on do. Results and diagnostics are joined in plan
 * order, as one module would have given them; after the first job that failed, nothing more. */
#define CG_JOB_BYTES 8192
#define CG_MAX_JOBS 16

typedef struct job {
	const dt_program *p;
	const dt_cg_env *env;
	const plan *plans;
	uint32_t nplans;
	dt_cg_result *r;
	dt_diags *d;
	int ret;
} job;

static void *job_main(void *arg)
{
	job *j = arg;

	j->ret = compile_fitting(j->p, j->env, j->plans, j->nplans, &j->r, j->d);
	/* This thread's target machine ends with it. */
	if (tm_kept)
		LLVMDisposeTargetMachine(tm_kept);
	tm_kept = NULL;
	return NULL;
}

/* The weight of a program for dividing them among jobs: its share of its probe's source. */
static uint64_t plan_weight(const plan *pl)
{
	uint32_t parts = pl->split && pl->split->nparts ? pl->split->nparts : 1;

	return 64 + pl->prog.probe->span.len / parts;
}

static unsigned jobs_wanted(uint32_t nplans, uint64_t total)
{
	uint64_t n = DT_MIN((uint64_t)dt_worker_threads(), total / CG_JOB_BYTES);

	n = DT_MIN(n, (uint64_t)nplans);
	n = DT_MIN(n, (uint64_t)CG_MAX_JOBS);
	return n ? (unsigned)n : 1;
}

/* Appends job result `from` to `to` (both in plan order), freeing `from`. */
static void join_result(dt_cg_result *to, dt_cg_result *from)
{
	to->progs = xrealloc(to->progs, (to->nprogs + from->nprogs) * sizeof(*to->progs));
	memcpy(to->progs + to->nprogs, from->progs, from->nprogs * sizeof(*from->progs));
	to->nprogs += from->nprogs;
	from->nprogs = 0;
	for (char **a = &to->ir, **b = &from->ir; b; b = b == &from->ir ? &from->asm_text : NULL,
	     a = a == &to->ir ? &to->asm_text : NULL) {
		if (!*b)
			continue;
		if (!*a) {
			*a = *b;
		} else {
			size_t la = strlen(*a), lb = strlen(*b);

			*a = xrealloc(*a, la + lb + 1);
			memcpy(*a + la, *b, lb + 1);
			free(*b);
		}
		*b = NULL;
	}
	dt_cg_result_free(from);
}

static int compile_jobs(const dt_program *p, const dt_cg_env *env, const plan *plans,
			uint32_t nplans, dt_cg_result **out, dt_diags *d)
{
	job jobs[CG_MAX_JOBS] = { 0 };
	pthread_t th[CG_MAX_JOBS];
	bool started[CG_MAX_JOBS] = { 0 };
	uint64_t total = 0, acc = 0;
	unsigned njobs, k = 0;
	int ret = 0;

	for (uint32_t i = 0; i < nplans; i++)
		total += plan_weight(&plans[i]);
	njobs = jobs_wanted(nplans, total);
	if (njobs < 2)
		return compile_fitting(p, env, plans, nplans, out, d);
	/* Consecutive runs of about total/njobs each. */
	for (uint32_t i = 0; i < nplans; i++) {
		if (!jobs[k].plans)
			jobs[k].plans = &plans[i];
		jobs[k].nplans++;
		acc += plan_weight(&plans[i]);
		if (k + 1 < njobs && acc >= total * (k + 1) / njobs && i + 1 < nplans)
			k++;
	}
	njobs = k + 1;
	for (unsigned j = 0; j < njobs; j++) {
		jobs[j].p = p;
		jobs[j].env = env;
		jobs[j].d = d ? dt_diags_new(dt_diags_source(d)) : NULL;
	}
	/* The calling thread takes the first job (and keeps its target machine). */
	for (unsigned j = 1; j < njobs; j++)
		started[j] = pthread_create(&th[j], NULL, job_main, &jobs[j]) == 0;
	jobs[0].ret = compile_fitting(p, env, jobs[0].plans, jobs[0].nplans, &jobs[0].r,
				      jobs[0].d);
	for (unsigned j = 1; j < njobs; j++) {
		if (started[j])
			pthread_join(th[j], NULL);
		else /* no thread: this one does it */
			job_main(&jobs[j]);
	}
	*out = NULL;
	for (unsigned j = 0; j < njobs; j++) {
		if (!ret) {
			dt_diags_move(d, jobs[j].d);
			ret = jobs[j].ret;
			if (!ret && !*out)
				*out = jobs[j].r;
			else if (!ret)
				join_result(*out, jobs[j].r);
			else
				dt_cg_result_free(jobs[j].r);
		} else {
			dt_diags_free(jobs[j].d);
			dt_cg_result_free(jobs[j].r);
		}
	}
	if (ret) {
		dt_cg_result_free(*out);
		*out = NULL;
	}
	return ret;
}

int dt_codegen(const dt_program *p, const dt_cg_env *env, dt_cg_result **out, dt_diags *d)
{
	cg c0 = { .prog = p, .env = env, .diags = d };
	cg_split *splits;
	plan *plans = NULL;
	uint32_t nplans = 0;
	int ret = 0;

	*out = NULL;
	llvm_init();
	if (!llvm_ready) {
		dt_diag(d, DT_DIAG_ERROR, p->nprobes ? p->probes[0]->span : (dt_span){ 0, 0 },
			"code generation after dt_codegen_shutdown");
		return -ESHUTDOWN;
	}
	/* The same plan dt_cg_resources_of made (it reported what cannot be split). */
	splits = xcalloc(p->nprobes + 1, sizeof(*splits));
	for (uint32_t i = 0; i < p->nprobes && !ret; i++)
		ret = cg_split_probe(p, p->probes[i], d, &splits[i]);
	if (!ret)
		ret = plan_programs(&c0, splits, &plans, &nplans);
	if (!ret)
		ret = compile_jobs(p, env, plans, nplans, out, d);
	free(plans);
	for (uint32_t i = 0; i < p->nprobes; i++)
		cg_split_fini(&splits[i]);
	free(splits);
	return ret;
}
