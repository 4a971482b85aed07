#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer) of every reader of outside
# input, each target for a bounded time over its checked-in corpus and
# regression files. A crash fails the run; libFuzzer saves the input under
# fuzz/artifacts/TARGET/. After the fix, keep it (minimised with
# `cargo +nightly fuzz tmin TARGET FILE`) in fuzz/regressions/TARGET/: every
# later run replays it first.
#
# Usage: scripts/fuzz.sh [TARGET...]      (default: every target)
#   FUZZ_SECONDS   time per target (default 15)
#
# Pure-Rust targets build with AddressSanitizer. Targets that link LLVM and
# MLIR (feature `llvm`) build without a sanitizer, into their own target
# folder: an ASan build of melior and inkwell takes far longer than CI has,
# and the C++ libraries they call are not instrumented either way, so ASan
# would watch only our safe Rust. libFuzzer still catches panics, aborts,
# timeouts and leaks of memory growth (-rss_limit_mb) there.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-15}"
asan_targets=(mir_parse pmir_read manifest_read bundle_read)
llvm_targets=(mlir_parse pmir_import container)

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly toolchain (\`cargo +nightly\` fails); cargo-fuzz needs one" >&2
    exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    # Idempotent: a no-op when the same version is installed.
    cargo install cargo-fuzz --locked
fi

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    targets=("${asan_targets[@]}" "${llvm_targets[@]}")
fi

flags_of() {
    local t
    for t in "${llvm_targets[@]}"; do
        if [ "$t" = "$1" ]; then
            echo "--dev --sanitizer none --features llvm --target-dir fuzz/target-nosan"
            return
        fi
    done
    for t in "${asan_targets[@]}"; do
        if [ "$t" = "$1" ]; then
            echo "--sanitizer address"
            return
        fi
    done
    echo "fuzz.sh: unknown target \`$1\` (known: ${asan_targets[*]} ${llvm_targets[*]})" >&2
    return 1
}

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
touch "$scratch/started"
failed=()
unbuilt=()
for t in "${targets[@]}"; do
    flags="$(flags_of "$t")"
    # New inputs go to a scratch folder: the checked-in corpus stays as is.
    mkdir -p "$scratch/$t"
    seeds=("fuzz/corpus/$t")
    if [ -d "fuzz/regressions/$t" ]; then
        seeds+=("fuzz/regressions/$t")
    fi
    echo "== fuzz $t (${seconds}s)"
    # shellcheck disable=SC2086 # flags are words
    if ! cargo +nightly fuzz run $flags "$t" "$scratch/$t" "${seeds[@]}" \
        -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
        2>&1 | tee "$scratch/$t.log"; then
        if grep -q 'failed to build fuzz script' "$scratch/$t.log"; then
            unbuilt+=("$t")
        else
            failed+=("$t")
        fi
    fi
done
if [ "${#unbuilt[@]}" -ne 0 ]; then
    # A target that did not build was not fuzzed: say so, with the
    # compiler's errors, rather than report a crash.
    for t in "${unbuilt[@]}"; do
        echo "== fuzz.sh: $t could not be built; the errors:" >&2
        { grep -E '^(error|rustc-LLVM ERROR)' "$scratch/$t.log" || true; } |
            cut -c1-300 | head -n 20 >&2
    done
    echo "fuzz.sh: NOT FUZZED (build failed): ${unbuilt[*]}" >&2
fi
if [ "${#failed[@]}" -ne 0 ]; then
    # CI shows the end of the output: each crash's report goes last, its
    # telling lines (a panic's message, the sanitizer's or libFuzzer's
    # verdict, where the input went) with a few lines after each, long
    # lines cut.
    report='panicked at|==[0-9]+==ERROR|ERROR: libFuzzer|SUMMARY:|has overflowed|Test unit written|Error: Fuzz target'
    for t in "${failed[@]}"; do
        echo "== fuzz.sh: $t crashed; its report:" >&2
        { grep -E -A3 "$report" "$scratch/$t.log" || true; } |
            cut -c1-300 | head -n 60 >&2
        # The input itself, where it is small: CI keeps no artifacts.
        { find "fuzz/artifacts/$t" -type f -newer "$scratch/started" -size -16k 2>/dev/null || true; } |
            while read -r input; do
                echo "fuzz.sh: $input, base64: $(base64 -w0 "$input")" >&2
            done
        if ! grep -q 'Test unit written to' "$scratch/$t.log"; then
            echo "fuzz.sh: $t died without saving its input (a signal libFuzzer could" \
                "not handle, such as a stack overflow): run it again to find one" >&2
        fi
    done
    echo "fuzz.sh: crashes in: ${failed[*]} (inputs under fuzz/artifacts/)" >&2
fi
if [ "${#unbuilt[@]}" -ne 0 ] || [ "${#failed[@]}" -ne 0 ]; then
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no crash"
