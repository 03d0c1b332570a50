#!/usr/bin/env bash
# dryrun-table.sh — loads every script of one or more directories with `dwarftrace --dry-run`,
# in the VM (Debian 12's 6.1 kernel: kprobes, fentry; tests/vm/run-vm.sh, one boot for all) and
# on this host, and prints a table: script, loads in the VM, loads here, and the first error of
# each place that refused it. For bpftrace's tools/ (or any other set of scripts), which the
# project does not carry: point it at a checkout.
#
#   tests/tools/dryrun-table.sh [--build-dir DIR] [--no-host] [--no-vm] [--ext EXT] DIR|FILE...
#
# EXT is the scripts' suffix (default bt). A script "loads" when --dry-run exits 0 (every
# program went through the kernel's verifier; probes that cannot attach were refused before).
# Exit status: 0 when every script loaded everywhere it was tried, 1 otherwise, 125 when the VM
# harness failed.
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$SRC/build
HOST=1
VM=1
EXT=bt
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) BUILD=$(cd "$2" && pwd); shift 2 ;;
	--no-host) HOST=0; shift ;;
	--no-vm) VM=0; shift ;;
	--ext) EXT=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "dryrun-table.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--build-dir DIR] [--no-host] [--no-vm] [--ext EXT] DIR|FILE..." >&2; exit 2; }
DT=$BUILD/runtime/dwarftrace
[ -x "$DT" ] || { echo "dryrun-table.sh: $DT is not built" >&2; exit 2; }

SCRIPTS=()
for a in "$@"; do
	a=$(readlink -f "$a")
	if [ -d "$a" ]; then
		while IFS= read -r f; do SCRIPTS+=("$f"); done < <(find "$a" -maxdepth 1 -type f -name "*.$EXT" | sort)
	elif [ -f "$a" ]; then
		SCRIPTS+=("$a")
	else
		echo "dryrun-table.sh: no such file or directory: $a" >&2
		exit 2
	fi
done
[ ${#SCRIPTS[@]} -gt 0 ] || { echo "dryrun-table.sh: no *.$EXT scripts in $*" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PER=${DRYRUN_TIMEOUT:-120}

# One shell script that loads each in turn; the same text runs in the guest (busybox sh) and here.
{
	for i in "${!SCRIPTS[@]}"; do
		printf 'echo "@@DRY %d@@"\n' "$i"
		printf 'timeout -s KILL %d %q --dry-run %q </dev/null 2>&1\n' "$PER" "$DT" "${SCRIPTS[$i]}"
		printf 'echo "@@DRY-END %d $?@@"\n' "$i"
	done
} >"$WORK/all.sh"

WITH=()
for s in "${SCRIPTS[@]}"; do WITH+=(--with "$s"); done

if [ $VM -eq 1 ]; then
	# With every module the guest has (xfs, md: xfsdist.bt, mdflush.bt probe them).
	VM_TIMEOUT=$((PER * ${#SCRIPTS[@]} + 240)) bash "$SRC/tests/vm/run-vm.sh" --build-dir "$BUILD" \
		--module all "${WITH[@]}" -- /bin/sh -c "$(cat "$WORK/all.sh")" >"$WORK/vm.out" 2>"$WORK/vm.err"
	st=$?
	if ! grep -q '^@@DRY-END ' "$WORK/vm.out"; then
		cat "$WORK/vm.err" >&2
		echo "dryrun-table.sh: the VM run failed (status $st)" >&2
		exit 125
	fi
fi
if [ $HOST -eq 1 ]; then
	(cd "$BUILD" && /bin/sh "$WORK/all.sh") >"$WORK/host.out" 2>&1
fi

# status and first error line of script I in an output file ("-" when not tried)
result() {
	local file=$1 i=$2
	[ -f "$file" ] || { printf -- '-\t\n'; return; }
	awk -v i="$i" '
		$0 == "@@DRY " i "@@" { on = 1; next }
		on && index($0, "@@DRY-END " i " ") == 1 {
			st = $2; sub(/@@$/, "", st); st = $3; sub(/@@$/, "", st)
			printf "%s\t%s\n", (st == 0 ? "yes" : "no"), why; exit
		}
		on && why == "" && /(error|ERROR)/ {
			why = $0
			sub(/^[^ ]*:[0-9]+:[0-9]+: /, "", why)   # FILE:LINE:COL: prefix
			sub(/^dwarftrace: /, "", why)
			why = substr(why, 1, 150)
		}' "$file"
}

fails=0
printf '%-26s %-4s %-4s  %s\n' SCRIPT VM HOST "WHY NOT (VM; host)"
for i in "${!SCRIPTS[@]}"; do
	IFS=$'\t' read -r vm vwhy < <([ $VM -eq 1 ] && result "$WORK/vm.out" "$i" || printf -- '-\t\n')
	IFS=$'\t' read -r host hwhy < <([ $HOST -eq 1 ] && result "$WORK/host.out" "$i" || printf -- '-\t\n')
	[ -n "$vm" ] || { vm=no; vwhy="no result (killed after ${PER}s?)"; }
	[ -n "$host" ] || { host=no; hwhy="no result (killed after ${PER}s?)"; }
	why=""
	[ "$vm" = no ] && why="VM: ${vwhy:-exit status non-zero}"
	[ "$host" = no ] && why="${why:+$why; }host: ${hwhy:-exit status non-zero}"
	[ "$vm" = no ] || [ "$host" = no ] && fails=$((fails + 1))
	printf '%-26s %-4s %-4s  %s\n' "$(basename "${SCRIPTS[$i]}")" "$vm" "$host" "$why"
done
n=${#SCRIPTS[@]}
nvm=$(grep -c '^@@DRY-END [0-9]* 0@@$' "$WORK/vm.out" 2>/dev/null || true)
nhost=$(grep -c '^@@DRY-END [0-9]* 0@@$' "$WORK/host.out" 2>/dev/null || true)
echo "loaded: VM ${nvm:-0}/$n, host ${nhost:-0}/$n"
[ $fails -eq 0 ]
