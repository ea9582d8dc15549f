#!/bin/bash
# A lent GPU session in one call (session 13 ran it on an H200): the Point learning tables of
# docs/results.md in parallel (phase B, ~6 min), then benchmarks/bench_envs.py and the training
# throughput alone on the GPU (phase A; a phase-B warm-up has cached their compiles).
#
# For the workplace's device tool, from the repository root: the wheels crax needs beyond the
# machine's image (mujoco 4.0.0, mujoco-core 4.0.0, mujoco-studio, mujoco-mjx 3.17.0, glfw, pyopengl,
# trimesh, tyro, docstring-parser, typeguard, gymnasium, farama-notifications, optax; NOT flax: the
# image's flax matches its jax) downloaded for cp312 into an ignored .whl/, then
#   run(command="PLAN=tables bash benchmarks/gpu_session.sh", carry=[".whl"], timeout_s=600)
# PLAN=tables: the Point tables of docs/results.md (session 13); PLAN=trust-region: issue 20's sweep
# (5 learners x PointGoal1, PointButton1 x 3 seeds at 2e6 steps; untried: may need more than one call);
# PLAN=issue24: issue 24's GPU half, no learning runs: crax bench of Warp-capable ids on both MJX
# implementations (the gpu-warp-4096 table), then an RK4 body with CRAX_RK4_STAGES rolled and unrolled
# (STATUS Next 8); add warp-lang's cp312 wheel to .whl/ for it (pip download warp-lang --no-deps
# --only-binary :all: --python-version 3.12 -d .whl). Its rows come back as $OUT/bench_gpu.jsonl: append
# them to benchmarks/results/bench_envs_gpu.jsonl here, then python benchmarks/readme_tables.py.
# Untried on a GPU (written in session 40; a dry run on the CPU took 545 s with END=560, before session 41
# put PointGoal1 first: it runs on Warp since decision 75).
# Results come back under $OUT: bench_gpu.jsonl, throughput_gpu.jsonl, results.tgz (the changed
# benchmarks/results files), runs.tgz (run folders without checkpoints), logs.tgz.
set -u
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
L=$OUT/logs; mkdir -p $L
rm -rf /tmp/site; python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $L/pip.log 2>&1 || { tail -20 $L/pip.log; exit 1; }
export PYTHONPATH=$PWD:/tmp/site XLA_PYTHON_CLIENT_PREALLOCATE=false CRAX_HOST_DEVICES=1 PYTHONUNBUFFERED=1
export JAX_COMPILATION_CACHE_DIR=/tmp/jaxcache TF_CPP_MIN_LOG_LEVEL=1
mkdir -p /tmp/bin; cat > /tmp/bin/crax <<'X'
#!/bin/bash
exec python3 -c 'import sys; from crax.cli import main; sys.argv[0] = "crax"; sys.exit(main())' "$@"
X
chmod +x /tmp/bin/crax; export PATH=/tmp/bin:$PATH
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv | tee $L/gpu.txt
python3 -c "import jax, flax, optax, mujoco; print('jax', jax.__version__, jax.devices(), 'flax', flax.__version__, 'optax', optax.__version__, 'mujoco', mujoco.__version__)" 2>&1 | tail -3 | tee -a $L/gpu.txt
if [ "${PLAN:-tables}" = issue24 ]; then  # rows go to bench_envs_gpu.jsonl as each is taken: a timeout keeps those
  G=benchmarks/results/bench_envs_gpu.jsonl; cp $G /tmp/gpu_orig.jsonl
  left() { echo $(( ${END:-560} - $1 - ( $(date +%s) - T0 ) )); }
  el "both physics"
  timeout $(left 240) python3 benchmarks/bench_envs.py --envs PointGoal1 PointCircle1 AntVelocity1 HopperVelocity1 SafetyPointGoal1-v0 --num-envs 4096 \
    --physics jax warp --no-ceiling --out $G > $L/warp.log 2>&1
  HALF=$(( $(left 15) / 2 ))  # the same time for each setting: compiling is what they differ in
  for s in rolled unrolled; do
    el "RK4 $s"; CRAX_RK4_STAGES=$s timeout $HALF python3 benchmarks/bench_envs.py \
      --envs SafetyAntVelocity-v1 --num-envs 4096 --no-ceiling --out $G > $L/rk4-$s.log 2>&1
  done
  tail -n +$(( $(wc -l < /tmp/gpu_orig.jsonl) + 1 )) $G > $OUT/bench_gpu.jsonl
  tar czf $OUT/logs.tgz -C $OUT logs
  for f in $L/*.log; do echo "== $f"; grep -v "^Module " $f | tail -4; done
  python3 -c "import sys, json; [print(r['env'], r.get('physics'), r.get('rk4_stages', ''), r['num_envs'], r['env_steps_per_s'], r['physics_steps_per_s'], r['ratio'], r['compile_s']) for r in map(json.loads, sys.stdin)]" < $OUT/bench_gpu.jsonl
  el done; exit 0
fi
touch /tmp/marker; cp benchmarks/results/bench_envs.jsonl /tmp/bench_orig.jsonl; cp benchmarks/results/throughput.jsonl /tmp/tp_orig.jsonl
BENCH="--envs PointGoal1 PointPush1 PointGoal3 SafetyPointGoal1-v0 AntVelocity1 --num-envs 1024 4096"
el "phase B"
( python3 benchmarks/bench_envs.py $BENCH --repeats 1 > $L/warm_bench.log 2>&1
  python3 benchmarks/train_throughput.py --iterations 1 > $L/warm_tp.log 2>&1; el warm done >> $L/warm_bench.log ) &
TR="$(python3 -c "from crax.cli.quick_start import batch_flags; print(batch_flags())")"  # the quick start's CPU batch
case "${PLAN:-tables}" in
tables)  # session 13's plan: the Point tables of docs/results.md
  python3 benchmarks/learning.py --env PointCircle1 --learners ppo ppo-lag > $L/circle.log 2>&1 &
  python3 benchmarks/learning.py --env PointButton1 --learners ppo ppo-lag > $L/button.log 2>&1 &
  python3 benchmarks/budgets.py --env PointGoal2 --total-steps 1000000 > $L/budgets.log 2>&1 &
  ( crax sweep --learners ppo-lag ppo-pid ppo --envs PointGoal1 --safety-bounds 15 25 35 --num-seeds 3 --total-steps 6e5 $TR --out sweeps/bounds \
    && crax table sweeps/bounds --out benchmarks/results/sweep_bounds_PointGoal1 && crax plot sweeps/bounds --out benchmarks/results/sweep_bounds_PointGoal1.png ) > $L/sweep.log 2>&1 &
  ( F="--total-steps 6e5 --num-seeds 3 $TR"
    crax curriculum ppo-lag --env PointGoal $F --run-dir runs/curriculum > $L/curriculum.log 2>&1 &
    crax train ppo-lag --env PointGoal3 $F --run-dir runs/direct > $L/direct.log 2>&1 &
    wait; python3 benchmarks/compare_runs.py --runs curriculum=runs/curriculum direct=runs/direct --out curriculum_PointGoal3 >> $L/direct.log 2>&1 ) &
  ;;
trust-region)  # issue 20's evidence: one sweep folder per learner (parallel processes), crax table over all
  for l in ppo-lag trpo-lag cpo pcpo cup; do
    crax sweep --learners $l --envs PointGoal1 PointButton1 --num-seeds 3 --total-steps 2e6 $TR --out sweeps/tr-$l > $L/tr-$l.log 2>&1 &
  done
  ;;
*) echo "unknown PLAN=$PLAN (tables, trust-region, issue24)"; exit 2 ;;
esac
while [ $(( $(date +%s) - T0 )) -lt ${PHASE_B:-360} ] && [ -n "$(jobs -r)" ]; do sleep 5; done
el "phase B ends; still running: $(jobs -r | wc -l)"; nvidia-smi --query-gpu=memory.used --format=csv >> $L/gpu.txt
desc() { for c in $(pgrep -P $1); do echo $c; desc $c; done; }
D=$(desc $$); [ -n "$D" ] && { kill -TERM $D 2>/dev/null; sleep 8; kill -KILL $(desc $$) 2>/dev/null; }; wait
if [ "${PLAN:-tables}" = trust-region ]; then  # the cells that finished; an interrupted sweep resumes with its command
  crax table sweeps/tr-* --out benchmarks/results/sweep_trust_region > $L/tr-table.log 2>&1
  crax plot sweeps/tr-* --out benchmarks/results/sweep_trust_region.png >> $L/tr-table.log 2>&1
fi
cp /tmp/bench_orig.jsonl benchmarks/results/bench_envs.jsonl; cp /tmp/tp_orig.jsonl benchmarks/results/throughput.jsonl
el "phase A: bench alone"
timeout $(( ${END:-560} - 70 - ( $(date +%s) - T0 ) )) python3 benchmarks/bench_envs.py $BENCH > $L/bench.log 2>&1
el "throughput alone"
timeout $(( ${END:-560} - 15 - ( $(date +%s) - T0 ) )) python3 benchmarks/train_throughput.py --iterations 3 > $L/tp.log 2>&1
el "packing"
tail -n +$(( $(wc -l < /tmp/bench_orig.jsonl) + 1 )) benchmarks/results/bench_envs.jsonl > $OUT/bench_gpu.jsonl
tail -n +$(( $(wc -l < /tmp/tp_orig.jsonl) + 1 )) benchmarks/results/throughput.jsonl > $OUT/throughput_gpu.jsonl
find benchmarks/results -maxdepth 1 -type f -newer /tmp/marker ! -name "*.jsonl" | tar czf $OUT/results.tgz -T -
find runs sweeps benchmarks/results/runs -type f \( -name "*.json" -o -name "*.jsonl" \) 2>/dev/null | grep -v checkpoint | tar czf $OUT/runs.tgz -T -
tar czf $OUT/logs.tgz -C $OUT logs
for f in $L/*.log; do echo "== $f"; tail -4 $f; done
cat $OUT/bench_gpu.jsonl | python3 -c "import sys, json; [print(r['env'], r['num_envs'], r['env_steps_per_s'], r['physics_steps_per_s'], r['ratio'], r['compile_s']) for r in map(json.loads, sys.stdin)]"
el done
