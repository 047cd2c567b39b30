#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NVIDIA's nccl-tests three ways on every GPU of the machine (docs/concepts/gpu.md):
# linked to the real NCCL ("direct"), linked to liblazynccl ("shim"), and
# the direct build under lazynccl-run ("dropin"). All three load the same
# file: the one the dynamic linker finds for libnccl.so.2 (ld.so.cache).
#   tests/gpu/nccl_tests.sh BUNDLE OUT TESTS
# TESTS holds direct/ and shim/ from tests/gpu/nccl_tests_build.sh.
# 1. every collective with -c 1 (results checked), each mode;
# 2. AllReduce bus bandwidth, 8 B to 1 GiB, BW_ROUNDS rounds (default 8),
#    the order of the modes rotated each round, all pinned to the same cores;
#    a second direct run each round ("control") measures the noise: its
#    ratio to direct is what identical programs differ by;
# 3. compute-sanitizer memcheck over one AllReduce, each mode.
# Writes OUT/nccl-tests.txt (the table last) and the raw outputs.
# ONLY=bandwidth: part 2 alone.
. "$(dirname "$0")/bundle_env.sh"
T=$(realpath "${3:?nccl-tests build}")
NG=$(nvidia-smi -L | grep -c '^GPU')
R=${REPORT:-$OUT/nccl-tests.txt}   # REPORT: elsewhere than beside the raw outputs
: > "$R"
PIN=$(command -v taskset >/dev/null && echo "taskset -c 0-7")
MODES=(direct shim dropin)
# mode MODE PROGRAM ARGS...: the program of nccl-tests, run one way.
mode() {
    local m=$1 p=$2
    shift 2
    case $m in
    direct | control) $PIN "$T/direct/$p" "$@" ;;
    shim) LD_LIBRARY_PATH=$B $PIN "$T/shim/$p" "$@" ;;
    dropin) $PIN "$RUN" --only nccl "$T/direct/$p" "$@" ;;
    esac
}
export -f mode
export T B RUN PIN
{
    echo "# nccl-tests on $NG GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
    echo "# direct: $(readelf -d "$T/direct/all_reduce_perf" | grep -o 'Shared library: \[libnccl[^]]*\]')," \
         "shim: $(readelf -d "$T/shim/all_reduce_perf" | grep -o 'Shared library: \[liblazy[^]]*\]')"
    echo "# libnccl.so.2 by ld.so.cache: $(ldconfig -p | grep -m1 'libnccl.so.2 ' | sed 's/.*=> //')"
} >> "$R"

# 1. Correctness.
[ "${ONLY:-}" = bandwidth ] || {
echo "## every collective, -c 1, -g $NG" >> "$R"
for p in all_reduce all_gather broadcast reduce_scatter reduce alltoall scatter gather sendrecv hypercube; do
    for m in "${MODES[@]}"; do
        log=$OUT/check_${p}_$m.txt
        timeout 120 env LD_DEBUG=files LD_DEBUG_OUTPUT=$OUT/lddebug_${p}_$m \
            bash -c 'mode "$@"' _ "$m" "${p}_perf" -g "$NG" -b 8 -e 8M -f 8 -c 1 -n 3 -w 1 \
            > "$log" 2>&1
        rc=$?
        wrong=$(awk '$1 ~ /^[0-9]+$/ && NF >= 13 { w += $9 + $13 } END { print w + 0 }' "$log")
        rows=$(awk '$1 ~ /^[0-9]+$/ && NF >= 13' "$log" | wc -l)
        oob=$(grep -o 'Out of bounds values : [0-9]* [A-Z]*' "$log")
        lib=$(grep -o 'nccl-library=[0-9]*' "$log" | head -1)
        # the real libnccl files the dynamic linker opened (drop-ins aside)
        real=$(cat "$OUT"/lddebug_${p}_$m.* 2>/dev/null | grep -o 'file=/[^ ]*libnccl\.so[^ ]*' \
               | grep -v /dropin/ | sort -u | sed 's/^file=//' | tr '\n' ' ')
        rm -f "$OUT"/lddebug_${p}_$m.*
        echo "$p $m rc=$rc rows=$rows wrong=$wrong [$oob] $lib real: ${real:-none}" >> "$R"
    done
done

}

# 2. AllReduce bandwidth.
BW_MODES=(direct shim dropin control)
for round in $(seq "${BW_ROUNDS:-8}"); do
    for k in 0 1 2 3; do
        m=${BW_MODES[$(((round + k) % 4))]}
        timeout 120 bash -c 'mode "$@"' _ "$m" all_reduce_perf -g "$NG" -b 8 -e 1G -f 2 -n 100 -w 20 \
            > "$OUT/bw_${m}_$round.txt" 2>&1
    done
done
$PY - "$OUT" >> "$R" <<'PYEOF'
import glob, statistics, sys
out = sys.argv[1]
def rows(path):
    r = {}
    for line in open(path):
        p = line.split()
        if len(p) >= 13 and p[0].isdigit():
            r[int(p[0])] = (float(p[5]), float(p[7]))   # out-of-place time (us), busbw (GB/s)
    return r
MODES = ("direct", "shim", "dropin", "control")
runs = {m: [rows(f) for f in sorted(glob.glob(f"{out}/bw_{m}_*.txt"), key=lambda f: int(f.rsplit("_", 1)[1][:-4]))]
        for m in MODES}
print(f"\n## AllReduce, out of place: rounds {[len(v) for v in runs.values()]} ({', '.join(MODES)}), order rotated")
print("\nEach ratio: the median of the modes' medians, and (min..max) of the per-round ratios; "
      "control is the direct program run again: its ratio is the noise.\n")
print("| bytes | direct busbw GB/s (median) | shim busbw | drop-in busbw | shim/direct | drop-in/direct | control/direct | direct us | shim us | drop-in us |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for size in (8, 1 << 20, 1 << 30):
    have = {m: [r[size] for r in v if size in r] for m, v in runs.items()}
    if not all(have.values()):
        print(f"| {size} | missing | | | | | | | |")
        continue
    med = {m: (statistics.median(t for t, _ in v), statistics.median(b for _, b in v)) for m, v in have.items()}
    # bus bandwidth where it is not 0 (one GPU), else time inverted
    use_bw = med["direct"][1] > 0
    def ratio(m):
        if use_bw:
            per = [b / d for (_, b), (_, d) in zip(have[m], have["direct"])]
            return med[m][1] / med["direct"][1], min(per), max(per)
        per = [d / t for (t, _), (d, _) in zip(have[m], have["direct"])]
        return med["direct"][0] / med[m][0], min(per), max(per)
    cells = []
    for m in ("shim", "dropin", "control"):
        r, lo, hi = ratio(m)
        cells.append(f"{r:.4f} ({lo:.3f}..{hi:.3f})")
    print(f"| {size} | {med['direct'][1]:.4g} | {med['shim'][1]:.4g} | {med['dropin'][1]:.4g} | {cells[0]} | {cells[1]} | {cells[2]} "
          f"| {med['direct'][0]:.4g} | {med['shim'][0]:.4g} | {med['dropin'][0]:.4g} |")
PYEOF

# 3. compute-sanitizer memcheck over one AllReduce of 1 MiB, each mode.
if [ "${ONLY:-}" != bandwidth ] && { command -v compute-sanitizer >/dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; }; then
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    echo "## compute-sanitizer memcheck, all_reduce_perf -g $NG -b 1M -e 1M -n 1 -w 0 -c 1" >> "$R"
    for m in "${MODES[@]}"; do
        log=$OUT/memcheck_$m.txt
        case $m in
        direct) timeout 150 "$CS" --tool memcheck --target-processes all "$T/direct/all_reduce_perf" -g "$NG" -b 1M -e 1M -n 1 -w 0 -c 1 ;;
        shim) timeout 150 env LD_LIBRARY_PATH="$B" "$CS" --tool memcheck --target-processes all "$T/shim/all_reduce_perf" -g "$NG" -b 1M -e 1M -n 1 -w 0 -c 1 ;;
        dropin) timeout 150 "$RUN" --only nccl "$CS" --tool memcheck --target-processes all "$T/direct/all_reduce_perf" -g "$NG" -b 1M -e 1M -n 1 -w 0 -c 1 ;;
        esac > "$log" 2>&1
        echo "memcheck $m rc=$? $(grep -o 'ERROR SUMMARY: [0-9]* errors*' "$log" | tail -1) [$(grep -o 'Out of bounds values : [0-9]* [A-Z]*' "$log")]" >> "$R"
    done
fi
cat "$R"
