#!/usr/bin/env bash
# The GitHub Action's check step (action.yml runs it; tests/test_action.py runs it locally).
#
# Inputs come as environment variables, as action.yml passes them:
#   ACCEL_DRC_BOARDS     glob(s) of boards, space- or newline-separated ('**' recurses)
#   ACCEL_DRC_CONFIG     accel-drc.yaml (optional; default: the one beside each board)
#   ACCEL_DRC_CLASS      training | inference | edge (optional)
#   ACCEL_DRC_KICAD_DRC  'true' to run KiCad's DRC in the same gate (needs kicad-cli)
#   ACCEL_DRC_OUT        output folder (default: accel-drc-report)
#   ACCEL_DRC_BIN        the accel-drc command (default: accel-drc)
#   ACCEL_DRC_PYTHON     the Python that has accel_drc (default: the one beside ACCEL_DRC_BIN,
#                        else python3): it writes the roll-up and the annotations
#   ACCEL_DRC_RUN_URL    this run's page (the summary links the artifact there; default: none)
#   ACCEL_DRC_ARTIFACT   the name of the artifact the reports are uploaded as ('' : not uploaded)
#   ACCEL_DRC_BASELINE   '' (none), an earlier `check --json` report, or 'main': each board as it
#                        is on the base branch (ACCEL_DRC_BASE_REF, default main), checked out in
#                        a temporary git worktree and checked to make the baseline
#   ACCEL_DRC_FAIL_ON    'error' (default) or 'new': exit 5 only for errors the baseline lacks
# Writes per board OUT/run-XXXXXX/<n>-<stem>/{report.html,findings.sarif,findings.json,junit.xml,
# summary.md} (run-XXXXXX: a new folder each run, so no report of an earlier run is ever shown as
# this run's; <stem>: the board's name with anything but [A-Za-z0-9._-] as '_', which
# actions/upload-artifact accepts); writes to $GITHUB_STEP_SUMMARY (a file; default: the run
# folder's summary.md) a roll-up table over all boards, then every board's summary.md; prints an
# annotation (::error file=…,line=…::) for each board's first 50 findings, most serious first;
# and writes exit-code, verdict and report-dir (the run folder) to $GITHUB_OUTPUT when set.
# Exits 0: the action's last step fails the job on exit-code, after the reports are uploaded.
#
# Board file names are the committer's data: each board goes to accel-drc after '--' (a name
# like '-rev2.kicad_pcb' is no option); in the job log a name is escaped as workflow-command data
# and everything accel-drc prints runs between ::stop-commands:: and a random resume token (a
# name holding a newline and '::error::' forges nothing); in the job summary it is Markdown text;
# the annotations escape it (and each finding's text) as workflow-command data and properties.
set -uo pipefail
shopt -s globstar nullglob

out="${ACCEL_DRC_OUT:-accel-drc-report}"
case "$out" in -*) out="./$out" ;; esac  # a folder, never an option of mkdir or mktemp
bin="${ACCEL_DRC_BIN:-accel-drc}"
py="${ACCEL_DRC_PYTHON:-}"
if [ -z "$py" ]; then
  py=python3
  case "$bin" in */*) [ -x "$(dirname -- "$bin")/python" ] && py="$(dirname -- "$bin")/python" ;; esac
fi
baseline="${ACCEL_DRC_BASELINE:-}"
fail_on="${ACCEL_DRC_FAIL_ON:-error}"

cmd_data() {  # TEXT as a workflow command's data (after the second '::'): % CR LF escaped
  local s=$1
  s=${s//[%]/%25}
  s=${s//$'\r'/%0D}
  s=${s//$'\n'/%0A}
  printf '%s' "$s"
}

cmd_prop() {  # TEXT as a workflow command's property value: also ':' and ',' escaped
  local s
  s=$(cmd_data "$1")
  s=${s//:/%3A}
  s=${s//,/%2C}
  printf '%s' "$s"
}

md_text() {  # TEXT as one line of Markdown text: whitespace as spaces, markup and HTML escaped,
  # bidirectional controls (U+202E and friends, which display a name reversed) shown as <U+XXXX>
  printf '%s' "$1" | LC_ALL=C tr '\t\n\r\v\f' '     ' | LC_ALL=C sed -e 's/[][\\`*_<>|~&!#]/\\&/g' \
    -e $'s/\xd8\x9c/\\\\<U+061C\\\\>/g' \
    -e $'s/\xe2\x80\x8e/\\\\<U+200E\\\\>/g' \
    -e $'s/\xe2\x80\x8f/\\\\<U+200F\\\\>/g' \
    -e $'s/\xe2\x80\xaa/\\\\<U+202A\\\\>/g' \
    -e $'s/\xe2\x80\xab/\\\\<U+202B\\\\>/g' \
    -e $'s/\xe2\x80\xac/\\\\<U+202C\\\\>/g' \
    -e $'s/\xe2\x80\xad/\\\\<U+202D\\\\>/g' \
    -e $'s/\xe2\x80\xae/\\\\<U+202E\\\\>/g' \
    -e $'s/\xe2\x81\xa6/\\\\<U+2066\\\\>/g' \
    -e $'s/\xe2\x81\xa7/\\\\<U+2067\\\\>/g' \
    -e $'s/\xe2\x81\xa8/\\\\<U+2068\\\\>/g' \
    -e $'s/\xe2\x81\xa9/\\\\<U+2069\\\\>/g'
}

folder_name() {  # a board's file name as a report folder name: [A-Za-z0-9._-], 64 bytes at most
  printf '%s' "${1%.*}" | LC_ALL=C tr -c 'A-Za-z0-9._-' '_' | LC_ALL=C cut -c1-64
}

stop_token() {  # an unguessable resume token for ::stop-commands:: (nothing printed can hold it)
  local t
  t=$(LC_ALL=C od -An -N16 -tx1 /dev/urandom 2>/dev/null | LC_ALL=C tr -d ' \n')
  [ -n "$t" ] || t="$RANDOM$RANDOM$RANDOM$RANDOM$$"
  printf 'accel-drc-%s' "$t"
}

say_error() {  # MESSAGE [FILE]: an error annotation (on FILE when given), its data escaped
  if [ -n "${2:-}" ]; then
    printf '::error file=%s,title=accel-drc::%s\n' "$(cmd_prop "$2")" "$(cmd_data "$1")"
  else
    printf '::error title=accel-drc::%s\n' "$(cmd_data "$1")"
  fi
}

scratch=""    # a temporary folder: the base branch's worktree and baselines (baseline: main)
base_tree=""  # the base branch checked out (git worktree) in $scratch/base
cleanup() {
  if [ -n "$base_tree" ]; then
    git worktree remove --force -- "$base_tree" >/dev/null 2>&1 || true
  fi
  if [ -n "$scratch" ]; then rm -rf -- "$scratch"; fi
}
trap cleanup EXIT

base_checkout() {  # baseline: main: the base branch (ACCEL_DRC_BASE_REF, default main) checked
  # out in a temporary worktree; sets base_tree and base_prefix (the working folder's path in
  # the repository).  Fetched first when the repository has an origin (a shallow CI clone
  # lacks it).  Returns 1, having said why, when there is none.
  local ref="${ACCEL_DRC_BASE_REF:-}" commit="" depth=()
  [ -n "$ref" ] || ref=main
  if ! git check-ref-format --branch "$ref" >/dev/null 2>&1; then
    say_error "baseline: main: '$ref' is not a branch name"
    return 1
  fi
  if ! base_prefix="$(git rev-parse --show-prefix 2>/dev/null)"; then
    say_error "baseline: main needs the boards in a git checkout (actions/checkout)"
    return 1
  fi
  if git remote get-url origin >/dev/null 2>&1; then
    [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ] && depth=(--depth=1)
    if git fetch -q --no-tags "${depth[@]}" origin "refs/heads/$ref" >/dev/null 2>&1; then
      commit="$(git rev-parse -q --verify 'FETCH_HEAD^{commit}' 2>/dev/null)"
    fi
  fi
  for candidate in "refs/heads/$ref" "refs/remotes/origin/$ref"; do
    [ -n "$commit" ] && break
    commit="$(git rev-parse -q --verify "$candidate^{commit}" 2>/dev/null)"
  done
  if [ -z "$commit" ]; then
    say_error "baseline: main: no branch '$ref' here or on origin"
    return 1
  fi
  scratch="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/accel-drc-base-XXXXXX")" || return 1
  if ! git worktree add -q --detach "$scratch/base" "$commit" >/dev/null 2>&1; then
    say_error "baseline: main: cannot check out '$ref' ($commit) in a worktree"
    return 1
  fi
  base_tree="$scratch/base"
  echo "accel-drc: baseline: the boards as on $(cmd_data "$ref") ($commit)"
}

base_report() {  # N BOARD: the baseline report of BOARD as on the base branch (baseline: main),
  # written to $scratch/base-N.json; a board that is not there (or cannot be read there) gets an
  # empty baseline: every finding is new.  Prints accel-drc's output (inside the caller's stop).
  local json="$scratch/base-$1.json" there=""
  case "$2" in /*) ;; *) there="$base_tree/$base_prefix$2" ;; esac
  if [ -n "$there" ] && [ -f "$there" ]; then
    local bargs=(check --quiet "--json=$json")
    [ -n "${ACCEL_DRC_CONFIG:-}" ] && bargs+=("--config=$ACCEL_DRC_CONFIG")
    [ -n "${ACCEL_DRC_CLASS:-}" ] && bargs+=("--class=$ACCEL_DRC_CLASS")
    [ "${ACCEL_DRC_KICAD_DRC:-false}" = "true" ] && bargs+=(--kicad-drc)
    echo "baseline: the board as on the base branch"
    "$bin" "${bargs[@]}" -- "$there" 2>&1
    case $? in 0 | 5) ;; *) rm -f -- "$json" ;; esac
  fi
  if [ ! -s "$json" ]; then
    echo "baseline: the board is not on the base branch (or not readable there): every finding is new"
    printf '{"findings": []}\n' > "$json"
  fi
}

finish() {  # exit-code verdict
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    { echo "exit-code=$1"; echo "verdict=$2"; echo "report-dir=$run"; } >> "$GITHUB_OUTPUT"
  fi
  exit 0
}

run=""
mkdir -p "$out"
if ! run="$(mktemp -d "$out/run-XXXXXX")"; then
  printf '::error title=accel-drc::%s\n' "$(cmd_data "cannot create a report folder in $out")"
  run=""
  finish 1 usage
fi
summary="${GITHUB_STEP_SUMMARY:-$run/summary.md}"
mkdir -p "$(dirname "$summary")"

boards=()
while IFS= read -r pattern; do
  [ -n "$pattern" ] || continue
  # shellcheck disable=SC2206  # the pattern is a glob on purpose
  matched=($pattern)
  boards+=("${matched[@]}")
done < <(printf '%s\n' "${ACCEL_DRC_BOARDS:-**/*.kicad_pcb}" | tr ' ' '\n')

if [ "${#boards[@]}" -eq 0 ]; then
  msg="accel-drc: no board matches '${ACCEL_DRC_BOARDS:-**/*.kicad_pcb}'"
  printf '::error title=accel-drc::%s\n' "$(cmd_data "$msg")"
  printf '## ❌ accel-drc: no board\n\n%s\n' "$(md_text "$msg")" >> "$summary"
  finish 1 usage
fi

case "$fail_on" in
  error | new) ;;
  *) say_error "fail-on: '$fail_on' is neither 'error' nor 'new'"; finish 1 usage ;;
esac
if [ "$fail_on" = new ] && [ -z "$baseline" ]; then
  say_error "fail-on: new needs a baseline (a JSON report, or 'main')"
  finish 1 usage
fi
if [ "$baseline" = main ]; then
  base_checkout || finish 1 usage
elif [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
  say_error "baseline: $baseline: no such file (an earlier \`accel-drc check --json\` report, or 'main')"
  finish 3 error
fi

worst=0
verdict=pass
n=0
rows=()      # BOARD FOLDER EXIT per board, for the roll-up and the annotations
sections=""  # every board's summary.md, written below the roll-up
for board in "${boards[@]}"; do
  n=$((n + 1))
  dir="$run/$n-$(folder_name "${board##*/}")"
  mkdir -p "$dir"
  # every option in its --flag=value form and the board after '--': no value is read as a flag
  args=(check "--html=$dir/report.html" "--sarif=$dir/findings.sarif"
        "--json=$dir/findings.json" "--junit=$dir/junit.xml" "--markdown=$dir/summary.md")
  [ -n "${ACCEL_DRC_CONFIG:-}" ] && args+=("--config=$ACCEL_DRC_CONFIG")
  [ -n "${ACCEL_DRC_CLASS:-}" ] && args+=("--class=$ACCEL_DRC_CLASS")
  [ "${ACCEL_DRC_KICAD_DRC:-false}" = "true" ] && args+=(--kicad-drc)
  args+=("--report-url=none")  # the roll-up links the reports (the run's artifact)
  token="$(stop_token)"
  printf '::group::accel-drc %s\n' "$(cmd_data "$board")"
  printf '::stop-commands::%s\n' "$token"
  if [ -n "$base_tree" ]; then
    base_report "$n" "$board"
    args+=("--baseline=$scratch/base-$n.json" "--fail-on=$fail_on")
  elif [ -n "$baseline" ]; then
    args+=("--baseline=$baseline" "--fail-on=$fail_on")
  fi
  "$bin" "${args[@]}" -- "$board" 2>&1  # one stream: its lines stay inside the stop
  rc=$?
  rows+=("$board" "$dir" "$rc")
  printf '\n::%s::\n' "$token"  # on a line of its own even if the output did not end one
  echo "::endgroup::"
  if [ -s "$dir/summary.md" ]; then
    sections+="$(cat "$dir/summary.md")"$'\n\n'
    v="$(sed -n '1s/.*: \([A-Z][A-Z ]*\)$/\1/p' "$dir/summary.md")"
    case "$v" in
      FAIL) verdict=fail ;;
      "NOT VERIFIED") [ "$verdict" = pass ] && verdict=unverified ;;
    esac
  else
    sections+="$(printf '## ❌ accel-drc: %s\n\naccel-drc exited %s before writing a summary (see the job log).' \
      "$(md_text "$board")" "$rc")"$'\n\n'
    verdict=error
  fi
  # a usage, input or internal error beats violations: the gate did not run as asked
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
    worst=$rc
    say_error "$board: accel-drc exited $rc (see the job log)" "$board"
  elif [ "$rc" -eq 5 ] && [ "$worst" -eq 0 ]; then
    worst=5
  fi
done
[ "$worst" -ne 0 ] && [ "$worst" -ne 5 ] && verdict=error

# the roll-up over all boards first, then each board's own summary; the findings as annotations
report=(--verdict "$verdict" --exit-code "$worst" --run-dir "$run"
        --run-url "${ACCEL_DRC_RUN_URL:-}" --artifact "${ACCEL_DRC_ARTIFACT:-}" -- "${rows[@]}")
if ! rollup="$("$py" -m accel_drc.action_report rollup "${report[@]}" 2>/dev/null)"; then
  rollup="## accel-drc: ${#boards[@]} board(s), verdict $verdict, exit code $worst"
  printf '::warning title=accel-drc::%s\n' "$(cmd_data "no roll-up: $py cannot run accel_drc")"
fi
printf '%s\n\n%s' "$rollup" "$sections" >> "$summary"
if ! "$py" -m accel_drc.action_report annotate "${report[@]}" 2>/dev/null; then
  printf '::warning title=accel-drc::%s\n' "$(cmd_data "no annotations: $py cannot run accel_drc")"
fi
echo "accel-drc: ${#boards[@]} board(s), verdict $verdict, exit code $worst"
finish "$worst" "$verdict"
