#!/usr/bin/env bash
# run-vm.sh — runs one command inside Debian 12's own 6.1 cloud kernel booted under qemu, for what
# the host kernel cannot do (kprobes). The guest is an initramfs: busybox-static, a tiny /init that
# mounts proc/sys/devtmpfs/tracefs/bpffs/debugfs (the rootfs itself is writable), the dwarftrace binary and the target programs at
# the same absolute paths as on the host (so test scripts need no rewriting), and the `ldd` closure
# of all of them. /init runs the command, prints its output on the serial console between markers
# and powers off; this script prints that output and exits with the command's status.
#
#   tests/vm/run-vm.sh [--build-dir DIR] [--] CMD [ARG...]
#
# The kernel package is found with apt-cache (the one linux-image-cloud-amd64 depends on, its
# -unsigned twin when there is one), fetched with `apt-get download` and unpacked with dpkg-deb into
# DIR/vm-cache, once. The initramfs base is rebuilt only when a binary in it changed. With /dev/kvm
# the guest runs under TCG (VM_ACCEL=kvm to try KVM). Exit status: the command's, or 125
# when the harness itself failed (no kernel, no qemu, the guest never printed the end marker).
# Environment: VM_TIMEOUT (seconds, default 240), VM_MEM (default 1536M), VM_VERBOSE=1 shows the
# guest's boot log on stderr.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$SRC/build
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) BUILD=$(cd "$2" && pwd); shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--build-dir DIR] [--] CMD [ARG...]" >&2; exit 125; }

CACHE=$BUILD/vm-cache
VM_TIMEOUT=${VM_TIMEOUT:-240}
VM_MEM=${VM_MEM:-1536M}
BEGIN_MARK="@@DT-VM-BEGIN@@"
END_MARK="@@DT-VM-END@@"

fail() { echo "run-vm.sh: $*" >&2; exit 125; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx poweroff ||
	fail "/bin/busybox (busybox-static) is missing"
mkdir -p "$CACHE"

# ---------------------------------------------------------------- the kernel
kernel_package() {
	local dep
	dep=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$dep" ] || return 1
	if apt-cache show "$dep-unsigned" >/dev/null 2>&1; then
		echo "$dep-unsigned"
	else
		echo "$dep"
	fi
}

fetch_kernel() {
	local pkg deb
	pkg=$(kernel_package) || fail "apt-cache knows no linux-image-cloud-amd64 (apt-get update?)"
	(cd "$CACHE" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		fail "apt-get download $pkg failed"
	deb=$(ls -t "$CACHE"/"$pkg"_*.deb | head -n1)
	rm -rf "$CACHE/kernel"
	dpkg-deb -x "$deb" "$CACHE/kernel" || fail "dpkg-deb -x $deb failed"
	rm -f "$deb"
}

VMLINUZ=$(ls "$CACHE"/kernel/boot/vmlinuz-* 2>/dev/null | head -n1 || true)
if [ -z "$VMLINUZ" ]; then
	fetch_kernel
	VMLINUZ=$(ls "$CACHE"/kernel/boot/vmlinuz-* 2>/dev/null | head -n1 || true)
	[ -n "$VMLINUZ" ] || fail "no vmlinuz in the kernel package"
fi

# ---------------------------------------------------------------- the initramfs base
DT=$BUILD/runtime/dwarftrace
[ -x "$DT" ] || fail "$DT is not built"
BINS=("$DT")
if [ -d "$BUILD/tests/targets" ]; then
	while IFS= read -r f; do BINS+=("$f"); done < <(find "$BUILD/tests/targets" -maxdepth 1 \
		-type f \( -perm -u+x -o -name '*.so' \))
fi

BASE=$CACHE/base.cpio
stale=0
[ -f "$BASE" ] || stale=1
for f in "${BINS[@]}" "$0"; do
	[ "$f" -nt "$BASE" ] 2>/dev/null && stale=1
done

build_base() {
	local root=$CACHE/root f lib
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,root,usr/bin,usr/sbin}
	cp /bin/busybox "$root/bin/busybox"
	for f in "${BINS[@]}"; do
		mkdir -p "$root$(dirname "$f")"
		cp "$f" "$root$f"
		# The ldd closure, at the same paths (static binaries have none).
		for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^[ \t]*\/[^ ]+ \(/ { print $1 }'); do
			[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
		done
	done
	# Debian's usrmerge: /lib64 and /lib are symlinks into /usr on the host; give the guest the same.
	for d in lib lib64; do
		if [ -L "/$d" ] && [ ! -e "$root/$d" ]; then ln -s "usr/$d" "$root/$d"; fi
		if [ -d "$root/$d" ] && [ ! -L "$root/$d" ] && [ -L "/$d" ]; then
			mkdir -p "$root/usr/$d"; cp -a "$root/$d/." "$root/usr/$d/"; rm -rf "${root:?}/$d"
			ln -s "usr/$d" "$root/$d"
		fi
	done
	cat >"$root/init" <<-INIT
	#!/bin/busybox sh
	/bin/busybox --install -s /bin
	export PATH=/bin:/sbin:/usr/bin:/usr/sbin
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	mount -t tracefs nodev /sys/kernel/tracing
	mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf
	echo 1 > /proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	hostname dtvm
	echo "$BEGIN_MARK"
	# Through a file, not the console: the command sees no terminal (no colours), as on the host.
	sh /cmd.sh >/cmd.out 2>&1 </dev/null
	st=\$?
	cat /cmd.out
	echo "$END_MARK \$st"
	poweroff -f
	INIT
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$BASE.tmp" || fail "cpio failed"
	mv "$BASE.tmp" "$BASE"
	rm -rf "$root"
}
[ $stale -eq 0 ] || build_base

# ---------------------------------------------------------------- this run's command
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
quote() { printf "'%s' " "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	printf 'cd %s 2>/dev/null || cd /\n' "$(quote "$BUILD")"
	for a in "$@"; do quote "$a"; done
	printf '\n'
} >"$WORK/cmd.sh"
(cd "$WORK" && echo cmd.sh | cpio -o -H newc --quiet) >"$WORK/cmd.cpio"
cat "$BASE" "$WORK/cmd.cpio" >"$WORK/initrd"

# TCG by default: KVM nested in this kind of host fails to emulate some guest instructions
# (cmpxchg16b: "KVM internal error"), and TCG boots this kernel in a few seconds anyway.
ACCEL=(-accel tcg,thread=multi -cpu max)
if [ "${VM_ACCEL:-tcg}" = kvm ] && [ -w /dev/kvm ]; then ACCEL=(-enable-kvm -cpu host); fi

set +e
timeout "$VM_TIMEOUT" qemu-system-x86_64 "${ACCEL[@]}" -m "$VM_MEM" -smp 2 -nographic \
	-no-reboot -monitor none -serial stdio -nic none \
	-kernel "$VMLINUZ" -initrd "$WORK/initrd" \
	-append "console=ttyS0 quiet loglevel=1 panic=-1 rdinit=/init" \
	</dev/null >"$WORK/console" 2>"$WORK/qemu.err"
qst=$?
set -e
tr -d '\r' <"$WORK/console" >"$WORK/console.txt"
[ "${VM_VERBOSE:-0}" = 1 ] && cat "$WORK/console.txt" >&2
if ! grep -q "^$END_MARK " "$WORK/console.txt"; then
	tail -n 30 "$WORK/console.txt" >&2
	cat "$WORK/qemu.err" >&2
	[ $qst -eq 124 ] && fail "the guest did not finish within ${VM_TIMEOUT}s"
	fail "the guest never printed its end marker (qemu status $qst)"
fi
awk -v b="$BEGIN_MARK" -v e="$END_MARK" '
	# SeaBIOS leaves terminal escapes on the marker line: look for the marker in the line.
	!on && index($0, b) { on = 1; next }
	index($0, e " ") == 1 { exit }
	on { print }' "$WORK/console.txt"
st=$(sed -n "s/^$END_MARK \\([0-9]*\\)\$/\\1/p" "$WORK/console.txt" | tail -n1)
exit "${st:-125}"
