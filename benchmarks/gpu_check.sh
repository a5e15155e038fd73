#!/usr/bin/env bash
# The local backend's GPU path, checked in at most 10 minutes, every figure written to one file.
#
#   benchmarks/gpu_check.sh [OUT_FILE]        # default: gpu_check.txt in the repository root
#
# With CUDA (torch sees a GPU) it runs, each step under its own time limit:
#   1. the local-backend test files whose service client takes the default device (`auto`: the
#      GPU), so that training, sampling, batching and checkpoints run on it;
#   2. the `sampler` and `train` parts of benchmarks/local_backend.py on embedded:debate-tiny,
#      with a CPU column and a `cuda` column;
#   3. a shortened addition job (warm-start and RL), `debate train examples/addition.toml backend.options.device=cuda`
#      (40 warm-start steps, 4 RL iterations, 50 evaluation problems), split by phase.
# Without CUDA it runs the same steps on the CPU, shortened (one test file, one sampler batch
# size and one training case, 2 warm-start steps and 1 RL iteration): CI runs this branch
# (tox env `gpu-check`) so that the script cannot rot.
#
# A GPU machine that cannot fetch packages: build the wheels here first, in the repository root
# (.whl/ is what the script installs from when it finds no debate_core; see
# docs/local-backend.md#the-gpu-check for the list and why each is needed):
#
#   pip wheel --no-deps -w .whl ./core
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl cattrs==26.2.1 tomli-w==1.2.0 tinker==0.38.0 pydantic==2.14.4 pydantic-core==2.50.5 \
#     annotated-types==0.8.0 typing-inspection==0.4.5 distro==1.9.0 sniffio==1.3.1 orjson==3.13.0 \
#     zstandard==0.25.0 pyqwest==0.12.0
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-$root/gpu_check.txt}
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

if ! "$py" -c "import debate_core" 2>/dev/null && [ -d .whl ]; then
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/debate-site .whl/*.whl \
    || { echo "gpu_check: installing .whl/ failed" >&2; exit 1; }
  export PYTHONPATH=/tmp/debate-site${PYTHONPATH:+:$PYTHONPATH}
fi
device=$("$py" -c "import torch; print('cuda' if torch.cuda.is_available() else 'cpu')") \
  || { echo "gpu_check: torch cannot be imported" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
: > "$out"
failed=0

section() { printf '\n== %s\n' "$1" | tee -a "$out"; }

step() {  # step SECONDS NAME COMMAND...: run one step under its time limit, its output into $out
  local limit=$1 name=$2 started status
  shift 2
  section "$name"
  started=$(date +%s)
  timeout "$limit" "$@" 2>&1 | tee -a "$out"
  status=${PIPESTATUS[0]}
  printf -- '-- %s: exit %s after %s s (limit %s s)\n' "$name" "$status" "$(($(date +%s) - started))" "$limit" | tee -a "$out"
  [ "$status" -eq 0 ] || failed=1
}

section "gpu_check on $(date -u +%Y-%m-%dT%H:%M:%SZ), device: $device"
"$py" - <<'EOF' 2>&1 | tee -a "$out"
import os, platform, subprocess, torch
try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except OSError:
    commit = ""
print(f"commit {commit or 'unknown (no git)'}; Python {platform.python_version()}; torch {torch.__version__}; "
      f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(f"GPU: {p.name}, {p.total_memory / 2**30:.0f} GiB, {p.multi_processor_count} multiprocessors")
EOF

tests=(tests/backends/local/test_losses.py)
if [ "$device" = cuda ]; then
  tests+=(tests/backends/local/test_training_paths.py tests/backends/local/test_optimizer.py
          tests/backends/local/sampling/test_sampling.py tests/backends/local/sampling/test_batching.py
          tests/backends/local/test_checkpoints.py tests/backends/local/test_sampler_checkpoints.py)
  bench=(--threads 4 --repeats 2 --profile-rows 12)
  job=(warmstart.steps=40 training.num_iterations=4 evaluation.num_problems=50)
  limits=(200 240 150)
else
  bench=(--threads 1 --repeats 1 --profile-rows 8 --sampler-batches 9 --cases "warm-start batch, full")
  job=(warmstart.steps=2 training.num_iterations=1 training.batch_size=2 evaluation.num_problems=2
       "evaluation.modes=['direct']")
  limits=(600 900 900)  # generous: CI may run beside other load (a heavily loaded 2-core machine timed out at 200, 400, 300)
fi

step "${limits[0]}" "local-backend tests on $device" "$py" -m pytest -q -x -p no:cacheprovider "${tests[@]}"
step "${limits[1]}" "benchmark: sampler and train parts ($device)" \
  "$py" benchmarks/local_backend.py sampler train --models embedded:debate-tiny "${bench[@]}"
step "${limits[2]}" "shortened addition job on $device" \
  "$py" benchmarks/phases.py examples/addition.toml "backend.options.device=$device" "${job[@]}" \
  training.save_every=0 logging.progress=off --keep "$scratch/run" --target-minutes 0

section "gpu_check: $([ "$failed" = 0 ] && echo 'every step passed' || echo 'a step FAILED'); figures in $out"
exit "$failed"
