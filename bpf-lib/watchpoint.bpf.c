// SPDX-License-Identifier: GPL-2.0
/* watchpoint.bpf.c — the entry half of watchpoint:FUNC+argN:LEN:MODE (and asyncwatchpoint).
 * runtime/watchpoint.c attaches dt_wp_setup as a uprobe on FUNC of the -c/-p program, one link
 * per attach point, with a bpf cookie that says which (DT_WP_COOKIE). On entry it takes the
 * address in argN, holds the process with SIGSTOP unless the watchpoint is async, and asks
 * userspace through the unit's events ring (reused by fd) to set the hardware breakpoint:
 * a DT_EV_WATCH record (dt_abi.h). Userspace sends SIGCONT once the breakpoint is set, so the
 * function's first access to the memory is seen. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <asm/signal.h>
#include <bpf/bpf_helpers.h>
#include <stddef.h>
#include "dt_abi.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DT_EVENTS_RINGBUF_SIZE);
} events SEC(".maps");

struct wp_event {
	struct dt_event_hdr hdr;
	struct dt_ev_watch w;
};

SEC("uprobe")
int dt_wp_setup(struct pt_regs *ctx)
{
	__u64 ck = bpf_get_attach_cookie(ctx);
	struct wp_event ev = {
		.hdr = { .kind = DT_EV_WATCH, .id = DT_WP_COOKIE_SLOT(ck) },
		.w = { .tgid = (__u32)(bpf_get_current_pid_tgid() >> 32),
		       .async = DT_WP_COOKIE_ASYNC(ck) },
	};

	/* The argument registers in x86-64 order. Read through a helper: a context access at an
	 * offset chosen at run time is one the verifier refuses. */
	static const __u16 argoff[6] = {
		offsetof(struct pt_regs, rdi), offsetof(struct pt_regs, rsi),
		offsetof(struct pt_regs, rdx), offsetof(struct pt_regs, rcx),
		offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	};
	__u32 arg = DT_WP_COOKIE_ARG(ck);

	bpf_probe_read_kernel(&ev.w.addr, sizeof(ev.w.addr),
			      (char *)ctx + argoff[arg < 6 ? arg : 5]);
	/* The signal goes to the current task's process; it stops on its way back to user mode,
	 * before the function's first instruction. */
	if (!ev.w.async)
		bpf_send_signal(SIGSTOP);
	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}
