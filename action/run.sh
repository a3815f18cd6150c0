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
#   ACCEL_DRC_REPORT_URL where the job summary links the HTML reports (the run's artifacts)
# Writes per board OUT/run-XXXXXX/<n>-<stem>/{report.html,findings.sarif,findings.json,junit.xml,
# summary.md} (run-XXXXXX: a new folder each run, so no report of an earlier run is ever shown as
# this run's; <stem>: the board's name with anything but [A-Za-z0-9._-] as '_', which
# actions/upload-artifact accepts), appends every summary.md to $GITHUB_STEP_SUMMARY (a file;
# default: the run folder's summary.md), and writes exit-code, verdict and report-dir (the run
# folder) to $GITHUB_OUTPUT when set.  Exits 0: the action's last step fails the job on
# exit-code, after the reports are uploaded.
#
# Board file names are the committer's data: each board goes to accel-drc after '--' (a name
# like '-rev2.kicad_pcb' is no option); in the job log a name is escaped as workflow-command data
# and everything accel-drc prints runs between ::stop-commands:: and a random resume token (a
# name holding a newline and '::error::' forges nothing); in the job summary it is Markdown text.
set -uo pipefail
shopt -s globstar nullglob

out="${ACCEL_DRC_OUT:-accel-drc-report}"
case "$out" in -*) out="./$out" ;; esac  # a folder, never an option of mkdir or mktemp
bin="${ACCEL_DRC_BIN:-accel-drc}"

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

worst=0
verdict=pass
n=0
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
  [ -n "${ACCEL_DRC_REPORT_URL:-}" ] && args+=("--report-url=$ACCEL_DRC_REPORT_URL")
  token="$(stop_token)"
  printf '::group::accel-drc %s\n' "$(cmd_data "$board")"
  printf '::stop-commands::%s\n' "$token"
  "$bin" "${args[@]}" -- "$board" 2>&1  # one stream: its lines stay inside the stop
  rc=$?
  printf '\n::%s::\n' "$token"  # on a line of its own even if the output did not end one
  echo "::endgroup::"
  if [ -s "$dir/summary.md" ]; then
    cat "$dir/summary.md" >> "$summary"
    echo >> "$summary"
    v="$(sed -n '1s/.*: \([A-Z][A-Z ]*\)$/\1/p' "$dir/summary.md")"
    case "$v" in
      FAIL) verdict=fail ;;
      "NOT VERIFIED") [ "$verdict" = pass ] && verdict=unverified ;;
    esac
  else
    printf '## ❌ accel-drc: %s\n\naccel-drc exited %s before writing a summary (see the job log).\n\n' \
      "$(md_text "$board")" "$rc" >> "$summary"
    verdict=error
  fi
  # a usage, input or internal error beats violations: the gate did not run as asked
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
    worst=$rc
    printf '::error file=%s,title=accel-drc::%s\n' "$(cmd_prop "$board")" \
      "$(cmd_data "$board: accel-drc exited $rc (see the job log)")"
  elif [ "$rc" -eq 5 ] && [ "$worst" -eq 0 ]; then
    worst=5
  fi
done
[ "$worst" -ne 0 ] && [ "$worst" -ne 5 ] && verdict=error
echo "accel-drc: ${#boards[@]} board(s), verdict $verdict, exit code $worst"
finish "$worst" "$verdict"
