#!/usr/bin/env bash
# run-vm.sh — runs one command inside Debian 12's own 6.1 cloud kernel booted under qemu, for what
# the host kernel cannot do (kprobes). The guest's root is an ext4 image on a virtio disk (see "the
# guest's root disk" below): busybox-static, a tiny /init that mounts proc/sys/devtmpfs/tracefs/
# bpffs/debugfs, the dwarftrace binary and the target programs at the same
# absolute paths as on the host (so test scripts need no rewriting), libclang, C headers, bash,
# libssl, and the `ldd` closure of all of them. /init runs the command, prints its output on the
# serial console between markers and powers off; this script prints that output and exits with
# the command's status.
#
#   tests/vm/run-vm.sh [--build-dir DIR] [--with PATH]... [--module NAME]... [--] CMD [ARG...]
#
# --with PATH puts a file or directory into this run's guest at the same path (e.g. scripts to
# load); --module NAME loads a kernel module of GUEST_MODULES (below) before CMD, --module all
# each of them. The kernel package is found with apt-cache (the one linux-image-cloud-amd64 depends on,
# its -unsigned twin when there is one), fetched with `apt-get download` and unpacked with
# dpkg-deb into DIR/vm-cache, once. The root image is rebuilt only when a file in it changed. The
# guest runs under TCG (VM_ACCEL=kvm to try KVM). Exit status: the command's, or 125
# when the harness itself failed (no kernel, no qemu, the guest never printed the end marker).
# Environment: VM_TIMEOUT (seconds, default 240), VM_MEM (default 1536M), VM_VERBOSE=1 shows the
# guest's boot log on stderr.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$SRC/build
WITH=()
LOAD=()
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) BUILD=$(cd "$2" && pwd); shift 2 ;;
	--with) WITH+=("$(readlink -f "$2")"); shift 2 ;;
	--module) LOAD+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--build-dir DIR] [--with PATH]... [--module NAME]... [--] CMD [ARG...]" >&2; exit 125; }

CACHE=$BUILD/vm-cache
VM_TIMEOUT=${VM_TIMEOUT:-240}
VM_MEM=${VM_MEM:-1536M}
BEGIN_MARK="@@DT-VM-BEGIN@@"
END_MARK="@@DT-VM-END@@"

fail() { echo "run-vm.sh: $*" >&2; exit 125; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
# grep reads all of busybox's list: with -q it would stop at the match, busybox would die of
# SIGPIPE, and pipefail would fail the check on a machine that has it.
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -x poweroff >/dev/null ||
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

# The kernel's headers (linux-headers-VERSION and its -common), unpacked once into
# DIR/vm-cache/kheaders: the guest has them at /usr/src with /lib/modules/VERSION/{build,source}
# naming them, as a Debian system with the headers installed, for scripts that #include the
# kernel's own headers (runqlat.bt: TASK_RUNNING from <linux/sched.h>).
KVER=$(basename "$VMLINUZ"); KVER=${KVER#vmlinuz-}
KHEADERS=$CACHE/kheaders
if [ ! -d "$KHEADERS/usr/src/linux-headers-$KVER" ]; then
	rm -rf "$KHEADERS.tmp"
	mkdir -p "$KHEADERS.tmp"
	common=$(apt-cache depends "linux-headers-$KVER" 2>/dev/null |
		awk '/Depends: linux-headers-.*-common$/ { print $2; exit }')
	[ -n "$common" ] || fail "apt-cache knows no linux-headers-$KVER (apt-get update?)"
	(cd "$KHEADERS.tmp" && apt-get download -q "linux-headers-$KVER" "$common" >/dev/null 2>&1) ||
		fail "apt-get download linux-headers-$KVER $common failed"
	for deb in "$KHEADERS.tmp"/*.deb; do
		dpkg-deb -x "$deb" "$KHEADERS.tmp/root" || fail "dpkg-deb -x $deb failed"
	done
	rm -rf "$KHEADERS"
	mv "$KHEADERS.tmp/root" "$KHEADERS"
	rm -rf "$KHEADERS.tmp"
fi

# ---------------------------------------------------------------- the guest's root disk
# The guest's root is an ext4 image on a virtio disk, read lazily: libclang and its LLVM (~200 MB)
# would cost every boot their unpacking if they were in the initramfs. What it holds, at the
# host's paths: dwarftrace and the target programs with their `ldd` closure; libclang (dwarftrace
# dlopens it for C definitions), its closure and clang's resource headers; the C headers of
# libc6-dev and linux-libc-dev (scripts #include <sys/socket.h>, <linux/...> uapi); bash,
# libssl and libcrypto (scripts probe them: bashreadline, sslsnoop); this source tree's tests/vm.
# qemu's snapshot=on makes the disk writable for the guest and leaves the image as it was.
# The initramfs only loads the virtio modules (from the kernel package), mounts the disk and
# switch_roots into it. Both are rebuilt only when a file in them changed.
DT=$BUILD/runtime/dwarftrace
[ -x "$DT" ] || fail "$DT is not built"
BINS=("$DT")
if [ -d "$BUILD/tests/targets" ]; then
	while IFS= read -r f; do BINS+=("$f"); done < <(find "$BUILD/tests/targets" -maxdepth 1 \
		-type f \( -perm -u+x -o -name '*.so' \))
fi
# Programs and libraries scripts probe or need, wherever the host has them.
for f in /bin/bash /usr/lib/x86_64-linux-gnu/libssl.so.3 /usr/lib/x86_64-linux-gnu/libcrypto.so.3 \
	/usr/bin/openssl; do
	[ -e "$f" ] && BINS+=("$f")
done
# All of glibc's libraries (threadsnoop.bt probes libpthread, which nothing links any more).
while IFS= read -r f; do BINS+=("$f"); done < <(dpkg -L libc6 2>/dev/null |
	grep -E '^/(usr/)?lib/x86_64-linux-gnu/lib[^/]*\.so(\.[0-9]+)*$')
# libclang under the first name dwarftrace's dlopen tries that the host has (ctypes/clang.c).
for f in /usr/lib/x86_64-linux-gnu/{libclang-14.so.1,libclang-14.so.13,libclang.so.1,libclang-14.so}; do
	[ -e "$f" ] && { BINS+=("$f"); break; }
done
# Whole trees: clang's resource headers (next to the library's LLVM), the C headers, tests/vm.
TREES=("$SRC/tests/vm")
for d in /usr/lib/llvm-14/lib/clang; do [ -d "$d" ] && TREES+=("$d"); done
HEADERS=$CACHE/headers.list
dpkg -L libc6-dev linux-libc-dev 2>/dev/null | grep '^/usr/include/' >"$HEADERS.tmp" || true
mv "$HEADERS.tmp" "$HEADERS"

MODDIR=$CACHE/kernel/lib/modules/$KVER/kernel
# The virtio disk's modules, dependencies first (their .modinfo says `depends=`).
MODULES=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk)

# Modules that bpftrace's tools probe functions of (xfsdist.bt: xfs; mdflush.bt: md): on the
# disk, loaded by the guest's /init only when a run asks (--module: xfs alone costs a TCG boot
# about 3 s), dependencies first.
GUEST_MODULES=(xfs md-mod)
# A module's .ko in the kernel package (names say '_' where files may say '-').
ko_of() { find "$MODDIR" \( -name "$1.ko" -o -name "$(echo "$1" | tr _ -).ko" \) -print -quit; }
# NAME's dependencies (its .modinfo's depends=), recursively, then NAME: one a line.
with_deps() {
	local f d
	f=$(ko_of "$1")
	[ -n "$f" ] || fail "no $1.ko in the kernel package"
	for d in $(grep -a -o 'depends=[^[:cntrl:]]*' "$f" | head -n1 | cut -d= -f2 | tr , ' '); do
		with_deps "$d"
	done
	basename "$f" .ko
}

ROOTIMG=$CACHE/root.ext4
STAGE1=$CACHE/stage1.cpio
stale=0
[ -f "$ROOTIMG" ] && [ -f "$STAGE1" ] || stale=1
[ "$KHEADERS" -nt "$ROOTIMG" ] && stale=1
for f in "${BINS[@]}" "$0"; do
	[ "$f" -nt "$ROOTIMG" ] 2>/dev/null && stale=1
done
for d in "${TREES[@]}"; do
	[ -n "$(find "$d" -newer "$ROOTIMG" -print -quit 2>/dev/null)" ] && stale=1
done
[ "$(tail -c +1 "$HEADERS" | wc -l)" -gt 0 ] || fail "dpkg -L libc6-dev linux-libc-dev listed no headers"

# Copies FILE to the same path under ROOT, its directory resolved (usrmerge: /lib/x/libc.so.6
# lands in /usr/lib/x, which the root's /lib symlink names too); the file's own name is kept.
put() {
	local root=$1 f=$2 dst
	dst=$(readlink -f "$(dirname "$f")")/$(basename "$f")
	[ -e "$root$dst" ] && return 0
	mkdir -p "$root$(dirname "$dst")"
	cp -L "$f" "$root$dst"
}

build_root() {
	local root=$CACHE/root f lib d m kb
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,root,usr/bin,usr/sbin,usr/lib}
	cp /bin/busybox "$root/bin/busybox"
	for f in "${BINS[@]}"; do
		put "$root" "$f"
		# The ldd closure, at the same paths (static binaries have none).
		for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^[ \t]*\/[^ ]+ \(/ { print $1 }'); do
			put "$root" "$lib"
		done
	done
	for d in "${TREES[@]}"; do
		mkdir -p "$root$d"
		cp -a "$d/." "$root$d/"
	done
	# The kernel's headers: /usr/src/linux-headers-* and /lib/modules/VERSION's symlinks to them.
	mkdir -p "$root/usr/src" "$root/usr/lib/modules"
	cp -a "$KHEADERS/usr/src/." "$root/usr/src/"
	cp -a "$KHEADERS/lib/modules/." "$root/usr/lib/modules/"
	while IFS= read -r f; do
		[ -f "$f" ] && put "$root" "$f"
	done <"$HEADERS"
	# Debian's usrmerge: /lib, /lib64, /bin and /sbin are symlinks into /usr on the host.
	for d in lib lib64; do
		[ -L "/$d" ] && [ ! -e "$root/$d" ] && ln -s "usr/$d" "$root/$d"
	done
	mkdir -p "$root/modules"
	for m in $(for m in "${GUEST_MODULES[@]}"; do with_deps "$m"; done); do
		cp "$(ko_of "$m")" "$root/modules/"
	done
	# bash where the host has it (scripts name /bin/bash), beside busybox's applets in /bin.
	[ -e "$root/usr/bin/bash" ] && ln -sf /usr/bin/bash "$root/bin/bash"
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
	for m in \$(cat /modules.load 2>/dev/null); do insmod /modules/\$m.ko || echo "init: insmod \$m failed"; done
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
	# Room for what the guest writes (the image is sparse: free space costs nothing here).
	kb=$(du -sk "$root" | cut -f1)
	rm -f "$ROOTIMG.tmp"
	mke2fs -q -F -t ext4 -O ^has_journal -L dtvm -d "$root" "$ROOTIMG.tmp" "$((kb * 5 / 4 + 262144))k" >/dev/null ||
		fail "mke2fs -d failed"
	rm -rf "$root"

	# The initramfs: busybox, the modules, an init that mounts the disk and switches to it.
	root=$CACHE/stage1
	rm -rf "$root"
	mkdir -p "$root"/{bin,dev,proc,newroot,modules}
	cp /bin/busybox "$root/bin/busybox"
	for m in "${MODULES[@]}"; do
		f=$(find "$MODDIR" -name "$m.ko" -print -quit)
		[ -n "$f" ] || fail "no $m.ko in the kernel package"
		cp "$f" "$root/modules/"
	done
	cat >"$root/init" <<-INIT
	#!/bin/busybox sh
	B=/bin/busybox
	\$B mount -t devtmpfs devtmpfs /dev
	for m in ${MODULES[*]}; do \$B insmod /modules/\$m.ko || echo "stage1: insmod \$m failed"; done
	i=0
	while [ ! -b /dev/vda ] && [ \$i -lt 200 ]; do \$B usleep 20000; i=\$((i + 1)); done
	\$B mount -t ext4 -o noatime /dev/vda /newroot || { echo "stage1: cannot mount /dev/vda"; \$B poweroff -f; }
	# This run's files (the command, --with paths), over the disk's.
	\$B cp -a /run/. /newroot/ 2>/dev/null
	\$B umount /dev
	exec \$B switch_root /newroot /init
	INIT
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$STAGE1.tmp" || fail "cpio failed"
	rm -rf "$root"
	mv "$STAGE1.tmp" "$STAGE1"
	mv "$ROOTIMG.tmp" "$ROOTIMG"
}
[ $stale -eq 0 ] || build_root

# ---------------------------------------------------------------- this run's command
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
quote() { printf "'%s' " "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
mkdir -p "$WORK/run"
{
	printf 'cd %s 2>/dev/null || cd /\n' "$(quote "$BUILD")"
	for a in "$@"; do quote "$a"; done
	printf '\n'
} >"$WORK/run/cmd.sh"
# The modules asked for, each after its dependencies.
[ "${LOAD[*]}" = all ] && LOAD=("${GUEST_MODULES[@]}")
for l in "${LOAD[@]}"; do
	printf '%s\n' "${GUEST_MODULES[@]}" | grep -x -- "$l" >/dev/null ||
		fail "--module $l: the guest has only ${GUEST_MODULES[*]}"
	with_deps "$l"
done | awk '!seen[$0]++' >"$WORK/run/modules.load"
for p in "${WITH[@]}"; do
	mkdir -p "$WORK/run$(dirname "$p")"
	cp -a "$p" "$WORK/run$p"
done
(cd "$WORK" && find run | cpio -o -H newc --quiet) >"$WORK/run.cpio"
cat "$STAGE1" "$WORK/run.cpio" >"$WORK/initrd"

# TCG by default: KVM nested in this kind of host fails to emulate some guest instructions
# (cmpxchg16b: "KVM internal error"), and TCG boots this kernel in a few seconds anyway.
ACCEL=(-accel tcg,thread=multi -cpu max)
if [ "${VM_ACCEL:-tcg}" = kvm ] && [ -w /dev/kvm ]; then ACCEL=(-enable-kvm -cpu host); fi

set +e
timeout "$VM_TIMEOUT" qemu-system-x86_64 "${ACCEL[@]}" -m "$VM_MEM" -smp 2 -nographic \
	-no-reboot -monitor none -serial stdio -nic none \
	-kernel "$VMLINUZ" -initrd "$WORK/initrd" \
	-drive "file=$ROOTIMG,format=raw,if=virtio,snapshot=on" \
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
