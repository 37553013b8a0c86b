#!/usr/bin/env bash
# The runs behind docs/baselines.md: reference policies trained on the 1,500 demos and
# evaluated on the 30 MEMOBench tasks. Every stage resumes where it stopped: run it again.
#
#   results/baselines/run.sh collect             # the demos (DATA, default data/demos-perturbed),
#                                                # perturbed with action noise NOISE (default 0.15);
#                                                # skips the attempts demos-perturbed.outcomes.json
#                                                # knows to fail, then updates it with the tasks collected
#   results/baselines/run.sh train               # the three state models: bc-mlp, bc-gru, bc-transformer
#   results/baselines/run.sh base                # evaluate bc-mlp, bc-gru, bc-transformer
#   results/baselines/run.sh variants POLICY [V...] # train POLICY (the better memory policy of `base`)
#                                                # with each alignment loss and with oracle memory, or
#                                                # only the variants V named (semantic contrastive
#                                                # framewise oracle shuffled reseed framewise-reseed),
#                                                # two at a time
#   results/baselines/run.sh losses POLICY       # evaluate POLICY (the better memory policy of
#                                                # `base`) with each alignment loss and oracle memory,
#                                                # and the controls (shuffled, reseed, framewise-reseed)
#                                                # once trained
#   results/baselines/run.sh sweep NAME          # replan 20, 35, 50 for the trained run NAME
#   results/baselines/run.sh rgb POLICY          # one rgb model on four pilot tasks' demos and tasks
#                                                # (RGB_TASKS; the stage collects none: `collect` first)
#   results/baselines/run.sh report              # docs/baselines-report/: tables, figures, comparisons
#
# Only `collect`, `train`, `variants` and `rgb` read the demos (~2 GB, not committed: a machine
# may not keep them), while the trained models (weights only: `memobench publish`) and the
# evaluation ledgers are committed and every later stage resumes from them alone. Training a
# model takes 8-55 minutes on one thread (bc-mlp to bc-transformer), evaluating one about
# an hour on two workers, so only the better memory policy gets the variants.
#
# Run from the repository root. WORKERS (default 2) sets the evaluation's worker processes,
# STEPS (default 10000) the optimiser steps of every model, HIDDEN (default 256) their width,
# THREADS (default 1) the torch threads of each of the two training lanes. TASKS (default all)
# and EPISODES (default 20 per task; collect: DEMOS, default 50) narrow a stage for a dry run:
#   TASKS=T01 EPISODES=1 DEMOS=2 STEPS=20 RGB_STEPS=5 DATA=/tmp/dry/demos OUTCOMES=/tmp/dry/outcomes.json \
#       results/baselines/run.sh collect
# (then train, base, ...) runs every stage in minutes; do it in a copy of the repository, since
# the stages write under results/baselines/.
set -euo pipefail

DATA=${DATA:-data/demos-perturbed}
NOISE=${NOISE:-0.15}
WORKERS=${WORKERS:-2}
STEPS=${STEPS:-10000}
HIDDEN=${HIDDEN:-256}
THREADS=${THREADS:-1}
TASKS=${TASKS:-all}
EPISODES=${EPISODES:-20}
DEMOS=${DEMOS:-50}
RGB_STEPS=${RGB_STEPS:-2000}
RGB_TASKS=${RGB_TASKS:-T09-pour-twice-bowl,S01-hide-and-retrieve-butter,O01-cued-milk,P04-stack-in-order}
ROOT=results/baselines
OUTCOMES=${OUTCOMES:-$ROOT/demos-perturbed.outcomes.json}
TRAIN="--data $DATA --steps $STEPS --hidden $HIDDEN --checkpoint-every 1000"
EVAL="--tasks $TASKS --num-trials-per-task $EPISODES --workers $WORKERS --resume"

# train NAME ARGS...: the training folder ROOT/train/NAME
train() {
    local name=$1
    shift
    memobench train $TRAIN --out "$ROOT/train/$name" "$@"
}

# variant POLICY VARIANT: bc-POLICY with the alignment loss VARIANT, with oracle memory, or one of
# two controls. shuffled: oracle memory whose checkpoint texts are permuted in each training
# episode, so the string no longer says which step comes next (what oracle memory gains over it
# is what the right, updated text is worth, not the extra prompt). reseed: bc-POLICY itself
# trained again with another seed (initialisation and batches), so the gap between two runs of
# one recipe is measured, the yardstick for a variant's gap. framewise-reseed: the Framewise
# variant trained again with seed 1, so the best variant's own seed-to-seed gap is measured too.
VARIANTS=(semantic contrastive framewise oracle shuffled reseed framewise-reseed) # the names variant() knows
is_variant() {
    local v
    for v in "${VARIANTS[@]}"; do [ "$v" = "$1" ] && return 0; done
    return 1
}
variant() {
    local policy=$1 name=$2
    case $name in
    oracle) train "$policy-oracle" --policy "bc-$policy" --oracle-memory ;;
    shuffled) train "$policy-shuffled" --policy "bc-$policy" --oracle-memory --shuffle-subgoals ;;
    reseed) train "$policy-reseed" --policy "bc-$policy" --seed 1 ;;
    framewise-reseed) train "$policy-framewise-reseed" --policy "bc-$policy" --align framewise --lambda 0.1 --seed 1 ;;
    *) train "$policy-$name" --policy "bc-$policy" --align "$name" --lambda 0.1 ;;
    esac
}

# memory_args VARIANT: how the variant is evaluated. A model trained with oracle memory is given the
# harness's oracle memory at the level it was trained at (the shuffled control too: at evaluation
# the texts are in order); the others, like their plain policy, none.
memory_args() {
    case $1 in oracle | shuffled) echo "--memory-oracle intermediate" ;; esac
}

# side_by_side NAME 'COMMANDS' NAME 'COMMANDS': two training lanes at once, one torch thread
# each (THREADS), logged to ROOT/train/lane-NAME.log; fails if either lane fails
side_by_side() {
    local pids=()
    while [ $# -gt 0 ]; do
        (export OMP_NUM_THREADS=$THREADS && eval "$2") >"$ROOT/train/lane-$1.log" 2>&1 &
        pids+=($!)
        shift 2
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
}

# trained NAME: the --adapter-kwargs of the checkpoint policy trained into ROOT/train/NAME
trained() {
    echo "{\"path\": \"$ROOT/train/$1\"}"
}

# evaluate NAME ARGS...: the checkpoint ROOT/train/NAME on all 30 tasks (ARGS may narrow them), into ROOT/eval/NAME
evaluate() {
    local name=$1
    shift
    memobench eval --policy checkpoint --adapter-kwargs "$(trained "$name")" \
        $EVAL --replan-steps 5 --out-root "$ROOT/eval/$name" "$@"
}

case ${1:-} in
collect)
    # The attempts the last collection saw fail (committed, so a machine that did not keep the demos
    # makes the same files without running them again); written anew when the collection ends.
    known=()
    [ -e "$OUTCOMES" ] && known=(--known-outcomes "$OUTCOMES")
    memobench collect --tasks "$TASKS" --episodes "$DEMOS" --action-noise "$NOISE" --workers "$WORKERS" \
        --out "$DATA" "${known[@]}"
    # the tasks collected replace theirs; a narrowed collection (TASKS) keeps the others'
    memobench data outcomes "$DATA" --out "$OUTCOMES" --update
    ;;
train)
    # The state features every model reads (DATA/state-features), then two lanes: bc-mlp and bc-gru
    # (8 and 34 minutes) beside bc-transformer (55).
    memobench data features "$DATA" --workers "$WORKERS"
    side_by_side mlp-gru 'train mlp --policy bc-mlp && train gru --policy bc-gru' \
        transformer 'train transformer --policy bc-transformer'
    # Published (weights only, float16 parameters) before it was evaluated: 7.5 MB as trained. bc-mlp
    # and bc-gru (2.2 and 4.9 MB) were committed and evaluated before `publish` existed: float32.
    memobench publish "$ROOT/train/transformer"
    ;;
variants)
    policy=${2:?the memory policy whose variants are trained: gru or transformer}
    shift 2
    names=("$@")
    [ ${#names[@]} -gt 0 ] || names=(semantic contrastive framewise oracle)
    # two lanes, the variants dealt to them in turn (a session that cannot hold all four trains two)
    lane_a="" lane_b=""
    for i in "${!names[@]}"; do
        is_variant "${names[$i]}" || {
            echo "unknown variant ${names[$i]}: one of ${VARIANTS[*]}" >&2
            exit 2
        }
        if [ $((i % 2)) = 0 ]; then lane_a+="variant $policy ${names[$i]}; "; else lane_b+="variant $policy ${names[$i]}; "; fi
    done
    memobench data features "$DATA" --workers "$WORKERS" # once, on two workers, not once a lane
    side_by_side "$policy-a" "$lane_a" "$policy-b" "${lane_b:-true}"
    for name in "${names[@]}"; do # what is committed, and so evaluated
        memobench publish "$ROOT/train/$policy-$name"
    done
    ;;
base)
    for policy in mlp gru transformer; do
        evaluate "$policy"
    done
    ;;
losses)
    policy=${2:?the memory policy whose variants are evaluated: gru or transformer}
    for name in "${VARIANTS[@]}"; do
        case $name in shuffled | *reseed) [ -e "$ROOT/train/$policy-$name/config.json" ] || continue ;; esac # the controls, once trained
        evaluate "$policy-$name" $(memory_args "$name")
    done
    ;;
sweep)
    name=${2:?the trained run to sweep, e.g. gru-contrastive}
    memobench sweep --policy checkpoint --adapter-kwargs "$(trained "$name")" \
        --tasks "$TASKS" --num-trials-per-task "$EPISODES" --workers "$WORKERS" --replan-steps 20,35,50 \
        --out-root "$ROOT/sweep/$name"
    ;;
rgb)
    policy=${2:?the memory policy to train on images: gru or transformer}
    # The RGB_TASKS demos, copied and rendered at 64 px (the 1,500 stay camera-free), or those TASKS
    # names when a dry run narrows it. By default the pilot tasks but T03: drawing both cameras
    # costs ~0.13 s a demo step here (each frame is drawn at the camera's size, then resized as
    # the harness resizes), and T03's 50 demos of ~790 steps are 36% of the pilot's steps; with
    # them the render alone takes ~2 hours of two workers, without them ~75 minutes.
    mkdir -p "$DATA-pilot-rgb64"
    rgb_tasks=$([ "$TASKS" = all ] && echo "$RGB_TASKS" || echo "$TASKS")
    for id in $(memobench tasks list --tasks "$rgb_tasks" --json | python -c 'import json,sys; print(*[t["id"] for t in json.load(sys.stdin)])'); do
        target="$DATA-pilot-rgb64/$id.hdf5"
        [ -e "$target" ] || { cp "$DATA/$id.hdf5" "$target.copying" && mv "$target.copying" "$target"; }
    done
    memobench data render "$DATA-pilot-rgb64" --image-size 64 --workers "$WORKERS"
    memobench train --data "$DATA-pilot-rgb64" --steps "$RGB_STEPS" --obs rgb --policy "bc-$policy" \
        --out "$ROOT/train/$policy-rgb"
    memobench publish "$ROOT/train/$policy-rgb"
    evaluate "$policy-rgb" --tasks "$rgb_tasks" --resize-size 64
    ;;
report)
    # every run folder under eval/ and sweep/ (a sweep holds one per replan interval)
    runs=$(find "$ROOT/eval" "$ROOT/sweep" -name run.json -printf '%h\n' 2>/dev/null | sort || true)
    [ -n "$runs" ] || { echo "no run folders under $ROOT/eval or $ROOT/sweep yet" >&2; exit 1; }
    memobench report $runs --out docs/baselines-report --link-figures
    # memory against memoryless, and each variant against its plain policy
    for name in $(ls "$ROOT/eval"); do
        case $name in
        mlp) continue ;;
        *-shuffled) base=${name%-shuffled}-oracle ;; # the control against what it controls
        *-*-reseed) base=${name%-reseed} ;;          # a variant's second seed against its first
        *-*) base=${name%%-*} ;;
        *) base=mlp ;;
        esac
        [ -e "$ROOT/eval/$base/run.json" ] || continue
        memobench compare "$ROOT/eval/$base" "$ROOT/eval/$name" --out "docs/baselines-report/compare/$name-vs-$base"
        # a training variant also against the plain recipe's second seed: a gap that holds
        # against both seeds is more than the luck of one training run
        plain=${name%%-*}
        # a variant's second seed also against the plain recipe's first (its first seed already is):
        # each run of a variant is read against both runs of the plain recipe
        if [[ $name == *-*-reseed ]] && [ -e "$ROOT/eval/$plain/run.json" ]; then
            memobench compare "$ROOT/eval/$plain" "$ROOT/eval/$name" --out "docs/baselines-report/compare/$name-vs-$plain"
        fi
        case $name in "$plain" | "$plain-reseed" | *-shuffled | *-rgb) continue ;; esac
        [ -e "$ROOT/eval/$plain-reseed/run.json" ] || continue
        memobench compare "$ROOT/eval/$plain-reseed" "$ROOT/eval/$name" --out "docs/baselines-report/compare/$name-vs-$plain-reseed"
    done
    # each replan interval of a sweep against the same model at replan 5 (its eval/ run)
    for run in $runs; do
        [[ $run == "$ROOT"/sweep/* ]] || continue
        name=$(basename "$(dirname "$run")") # sweep/NAME/checkpoint-NAME-rK
        [ -e "$ROOT/eval/$name/run.json" ] || continue
        memobench compare "$ROOT/eval/$name" "$run" --out "docs/baselines-report/compare/$name-r${run##*-r}-vs-$name"
    done
    # the two memory mechanisms against each other: which one gets the variants
    if [ -e "$ROOT/eval/gru/run.json" ] && [ -e "$ROOT/eval/transformer/run.json" ]; then
        memobench compare "$ROOT/eval/gru" "$ROOT/eval/transformer" --out docs/baselines-report/compare/transformer-vs-gru
    fi
    ;;
*)
    sed -n '2,/run.sh report/p' "$0"
    exit 2
    ;;
esac
