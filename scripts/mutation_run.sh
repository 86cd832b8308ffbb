#!/usr/bin/env bash
# Mutation testing, one module at a time: mutmut plants one small change at a time in
# the module (a < for a <=, a constant off by one, an argument dropped) and runs the
# module's tests on each; a change no test notices is a survivor, a bug the suite would
# let through. tests/mutation/SURVIVORS.md says what the runs found and why each
# survivor left is harmless.
#
#   scripts/mutation_run.sh [--dry-run] [--children N] [--tests "FILE..."] MODULE...
#
# MODULE is a file of the package (reducebench/ladder/auto.py). Each runs in a scratch
# copy of the working tree, $MUTATION_DIR/<module> (default
# ${TMPDIR:-/tmp}/reducebench-mutation), made afresh, with pyproject.toml's [tool.mutmut]
# plus only_mutate = [MODULE], the module's tests (the table below, or --tests) and
# results/ in also_copy (tests read the committed result files). The
# repository itself is never changed. Prints one line per module (mutants detected of
# all, by outcome, seconds taken); the survivors, with their diffs, go to
# <scratch>/survivors.txt and the whole log to <scratch>/mutmut.log. Several modules
# end with their lines again and one line for all of them together.
#
#   --dry-run      say what would run (copies, tests, commands) and run nothing
#   --children N   mutants tested at once (default 1: the machine is shared)
#   --tests "..."  the test files for every MODULE given, instead of the table's
#
# MUTMUT names the mutmut to use (default: .venv/bin/mutmut, else mutmut on PATH);
# the summary runs with the python beside it. Needs mutmut 3 (pip install mutmut).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
NAME=scripts/mutation_run.sh
WORK=${MUTATION_DIR:-${TMPDIR:-/tmp}/reducebench-mutation}
CHILDREN=1
DRY=0
OVERRIDE=""
COPIED="reducebench tests configs cuda_src examples scripts results pyproject.toml"

# The tests that exercise each module: tight, so that each mutant runs seconds of tests.
tests_for() {
    case "$1" in
        reducebench/measuring/plausible.py) echo "tests/test_plausible.py" ;;
        reducebench/tune/rows.py) echo "tests/test_row_tune.py" ;;
        reducebench/core/shape_sweeps.py) echo "tests/test_shape_sweeps.py tests/test_shapes.py" ;;
        reducebench/verify/row_inputs.py) echo "tests/test_rows.py tests/test_rows_user.py" ;;
        reducebench/ladder/auto.py)
            echo "tests/test_tuning.py tests/test_tuning_checks.py tests/test_auto.py" ;;
        reducebench/multigpu/launch.py) echo "tests/test_cluster.py tests/test_launch_checks.py" ;;
        reducebench/verify/tolerance.py) echo "tests/test_stats_tolerance.py tests/test_verdict.py" ;;
        reducebench/verify/verdict.py)
            echo "tests/test_stats_tolerance.py tests/test_verdict.py tests/test_guards.py" ;;
        reducebench/analysis/compare/round_verdict.py) echo "tests/test_compare_rounds.py" ;;
        reducebench/analysis/compare/judge.py)
            echo "tests/test_compare_judge.py tests/test_compare_rounds.py tests/test_compare.py tests/test_compare_peers.py" ;;
        reducebench/analysis/compare/summary.py)
            echo "tests/test_compare_summary.py tests/test_compare.py tests/test_compare_rounds.py" ;;
        reducebench/analysis/compare/calibration.py)
            echo "tests/test_calibration.py tests/test_calibrate.py" ;;
        reducebench/analysis/compare/match.py)
            echo "tests/test_compare_match.py tests/test_compare_summary.py tests/test_compare.py" ;;
        reducebench/ladder/case.py)
            echo "tests/test_case_keys.py tests/test_rows.py tests/test_compare_match.py" ;;
        reducebench/analysis/significance.py)
            echo "tests/test_significance.py tests/test_compare_pairs.py" ;;
        reducebench/results/naming.py)
            echo "tests/test_results_naming.py tests/test_unused_names.py tests/test_results_config.py tests/test_samples.py" ;;
        reducebench/results/store.py) echo "tests/test_results_store_counts.py" ;;
        reducebench/results/csvfile.py)
            echo "tests/test_csvfile.py tests/test_rewrite_keeping_backup.py" ;;
        reducebench/results/schema.py)
            echo "tests/test_results_schema.py tests/test_results_schema_version.py" ;;
        reducebench/results/samples_file.py) echo "tests/test_samples_file.py tests/test_samples.py" ;;
        reducebench/results/files.py)
            echo "tests/test_results_files.py tests/test_results_schema_version.py" ;;
        reducebench/verify/compute_sanitizer.py)
            echo "tests/test_sanitize_report.py tests/test_guards.py" ;;
        reducebench/verify/inputs.py) echo "tests/test_inputs_small.py" ;;
        reducebench/verify/guard_regions.py) echo "tests/test_guards.py" ;;
        reducebench/analysis/compare/baseline.py)
            echo "tests/test_compare_baseline.py tests/test_compare.py" ;;
        reducebench/analysis/samples_summary.py) echo "tests/test_analysis_samples.py tests/test_samples.py" ;;
        reducebench/analysis/fleet.py) echo "tests/test_fleet.py tests/test_cluster.py" ;;
        reducebench/analysis/ladder_steps.py) echo "tests/test_explain.py tests/test_explain_rules.py" ;;
        reducebench/analysis/compare/reading.py) echo "tests/test_compare_reading.py" ;;
        reducebench/analysis/compare/__init__.py)
            echo "tests/test_compare.py tests/test_compare_judge.py" ;;
        reducebench/results/metadata.py) echo "tests/test_results_metadata.py" ;;
        reducebench/measuring/rounds.py) echo "tests/test_rounds.py" ;;
        reducebench/measuring/repeat.py)
            echo "tests/test_calibrate_runs.py tests/test_calibrate.py" ;;
        reducebench/core/stats.py) echo "tests/test_stats_tolerance.py tests/test_rounds.py" ;;
        reducebench/multigpu/loop.py)
            echo "tests/test_multigpu_loop.py tests/test_multigpu.py tests/test_cluster.py" ;;
        reducebench/measuring/lifecycle.py) echo "tests/test_lifecycle.py" ;;
        reducebench/core/numbers.py) echo "tests/test_numbers.py" ;;
        reducebench/multigpu/one_gpu.py) echo "tests/test_launched_one_gpu.py" ;;
        reducebench/measuring/bound_plan.py) echo "tests/test_hostexec.py tests/test_guards.py" ;;
        reducebench/ladder/user_specs.py) echo "tests/test_user_specs.py" ;;
        reducebench/render/printers.py)
            echo "tests/test_printers.py tests/test_house_cli.py tests/test_cli_formats.py" ;;
        reducebench/multigpu/ranks.py)
            echo "tests/test_ranks.py tests/test_cluster.py tests/test_lifecycle.py" ;;
        reducebench/multigpu/host.py) echo "tests/test_multigpu_host.py tests/test_multigpu.py" ;;
        *) echo "" ;;
    esac
}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
fail() { echo "$NAME: $*" >&2; exit 2; }

modules=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --dry-run) DRY=1 ;;
        --children) [ $# -ge 2 ] || fail "--children needs a number"; CHILDREN=$2; shift ;;
        --tests) [ $# -ge 2 ] || fail "--tests needs test files"; OVERRIDE=$2; shift ;;
        -*) fail "unknown option $1 (see --help)" ;;
        *) modules+=("$1") ;;
    esac
    shift
done
[ ${#modules[@]} -gt 0 ] || fail "name at least one module, e.g. reducebench/ladder/auto.py"
[[ $CHILDREN =~ ^[1-9][0-9]*$ ]] || fail "--children $CHILDREN: expected a whole number of 1 or more"

# Check every module and its tests before anything runs.
declare -A selection
for module in "${modules[@]}"; do
    [ -f "$ROOT/$module" ] || fail "no such module: $module"
    tests=${OVERRIDE:-$(tests_for "$module")}
    [ -n "$tests" ] || fail "no test selection for $module: give one with --tests or add it to $NAME"
    for file in $tests; do
        [ -f "$ROOT/$file" ] || fail "$module: no such test file $file"
    done
    selection[$module]=$tests
done

MUTMUT=${MUTMUT:-}
if [ -z "$MUTMUT" ]; then
    if [ -x "$ROOT/.venv/bin/mutmut" ]; then MUTMUT=$ROOT/.venv/bin/mutmut; else MUTMUT=mutmut; fi
fi
if [ $DRY = 0 ]; then
    command -v "$MUTMUT" > /dev/null || fail "no mutmut ($MUTMUT): pip install mutmut, or set MUTMUT"
    MUTMUT=$(command -v "$MUTMUT")
fi
PYTHON=$(dirname "$MUTMUT")/python
[ -x "$PYTHON" ] || PYTHON=python3

quoted_list() { local out="" f; for f in $1; do out+="${out:+, }\"$f\""; done; echo "[$out]"; }

lines=()
for module in "${modules[@]}"; do
    dir=$WORK/$(echo "${module%.py}" | tr '/' '_')
    tests=${selection[$module]}
    run="$MUTMUT run --max-children $CHILDREN"
    if [ $DRY = 1 ]; then
        echo "$module"
        echo "  copy: $COPIED -> $dir"
        echo "  [tool.mutmut] only_mutate = [\"$module\"]"
        echo "  [tool.mutmut] pytest_add_cli_args_test_selection = $(quoted_list "$tests")"
        echo "  [tool.mutmut] also_copy gets \"results\""
        echo "  run: (cd $dir && $run)"
        echo "  then: $PYTHON scripts/mutation_summary.py $dir $module SECONDS --survivors $dir/survivors.txt"
        continue
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$ROOT" && cp -r $COPIED "$dir/")
    find "$dir" -name __pycache__ -prune -exec rm -rf {} +
    # this module and its tests, inside the copy's own [tool.mutmut] table
    sed -i "/^\[tool\.mutmut\]\$/a only_mutate = [\"$module\"]\npytest_add_cli_args_test_selection = $(quoted_list "$tests")" \
        "$dir/pyproject.toml"
    grep -q '^only_mutate = ' "$dir/pyproject.toml" || fail "pyproject.toml has no [tool.mutmut] table"
    # the tests read the committed result files too (explain, compare, the readers)
    if grep -q '^also_copy = \[' "$dir/pyproject.toml"; then
        sed -i 's/^also_copy = \[/also_copy = ["results", /' "$dir/pyproject.toml"
    else
        sed -i '/^\[tool\.mutmut\]$/a also_copy = ["results"]' "$dir/pyproject.toml"
    fi
    echo "$NAME: $module: $run, tests: $tests" >&2
    began=$SECONDS
    status=0
    (cd "$dir" && $run > mutmut.log 2>&1) || status=$?
    took=$((SECONDS - began))
    if [ $status != 0 ] || [ ! -f "$dir/mutants/$module.meta" ]; then
        tail -20 "$dir/mutmut.log" >&2
        fail "$module: mutmut stopped (exit $status); log: $dir/mutmut.log"
    fi
    line=$("$PYTHON" "$ROOT/scripts/mutation_summary.py" "$dir" "$module" "$took" \
           --survivors "$dir/survivors.txt")
    echo "$line"
    lines+=("$line")
done
if [ $DRY = 0 ] && [ ${#lines[@]} -gt 1 ]; then
    echo
    printf '%s\n' "${lines[@]}"
    printf '%s\n' "${lines[@]}" | "$PYTHON" "$ROOT/scripts/mutation_summary.py" --total -
fi
