// SPDX-License-Identifier: GPL-2.0
/* entry_stop.bpf.c — holds a -c command at its ELF entry point. runtime/child.c attaches it as a
 * one-shot uprobe on the command's entry (restricted to its pid) when the program takes user
 * stacks: the dynamic loader has mapped every library by then, so userspace can read the process
 * (unwind tables, symbols) while it is stopped, then detach the uprobe and send SIGCONT. Without
 * it a short-lived command could end before the unwinder has read its mappings. */
#include <linux/bpf.h>
#include <asm/signal.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int dt_entry_stop(void *ctx)
{
	/* The signal goes to the current task's process: the command that hit its entry. */
	bpf_send_signal(SIGSTOP);
	return 0;
}
