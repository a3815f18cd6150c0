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
# Writes per board OUT/<n>-<stem>/{report.html,findings.sarif,findings.json,junit.xml,summary.md},
# appends every summary.md to $GITHUB_STEP_SUMMARY (a file; default OUT/summary.md), and writes
# exit-code, verdict and report-dir to $GITHUB_OUTPUT when set.  Exits 0: the action's last step
# fails the job on exit-code, after the reports are uploaded.
set -uo pipefail
shopt -s globstar nullglob

out="${ACCEL_DRC_OUT:-accel-drc-report}"
bin="${ACCEL_DRC_BIN:-accel-drc}"
summary="${GITHUB_STEP_SUMMARY:-$out/summary.md}"
mkdir -p "$out" "$(dirname "$summary")"

boards=()
while IFS= read -r pattern; do
  [ -n "$pattern" ] || continue
  # shellcheck disable=SC2206  # the pattern is a glob on purpose
  matched=($pattern)
  boards+=("${matched[@]}")
done < <(printf '%s\n' "${ACCEL_DRC_BOARDS:-**/*.kicad_pcb}" | tr ' ' '\n')

finish() {  # exit-code verdict
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    { echo "exit-code=$1"; echo "verdict=$2"; echo "report-dir=$out"; } >> "$GITHUB_OUTPUT"
  fi
  exit 0
}

if [ "${#boards[@]}" -eq 0 ]; then
  msg="accel-drc: no board matches '${ACCEL_DRC_BOARDS:-**/*.kicad_pcb}'"
  echo "$msg" >&2
  printf '## ❌ accel-drc: no board\n\n%s\n' "$msg" >> "$summary"
  finish 1 usage
fi

worst=0
verdict=pass
n=0
for board in "${boards[@]}"; do
  n=$((n + 1))
  stem="$(basename "$board")"
  dir="$out/$n-${stem%.*}"
  mkdir -p "$dir"
  args=(check "$board" --html "$dir/report.html" --sarif "$dir/findings.sarif"
        --json "$dir/findings.json" --junit "$dir/junit.xml" --markdown "$dir/summary.md")
  [ -n "${ACCEL_DRC_CONFIG:-}" ] && args+=(--config "$ACCEL_DRC_CONFIG")
  [ -n "${ACCEL_DRC_CLASS:-}" ] && args+=(--class "$ACCEL_DRC_CLASS")
  [ "${ACCEL_DRC_KICAD_DRC:-false}" = "true" ] && args+=(--kicad-drc)
  [ -n "${ACCEL_DRC_REPORT_URL:-}" ] && args+=(--report-url "$ACCEL_DRC_REPORT_URL")
  echo "::group::accel-drc $board"
  "$bin" "${args[@]}"
  rc=$?
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
      "$board" "$rc" >> "$summary"
    verdict=error
  fi
  # a usage, input or internal error beats violations: the gate did not run as asked
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
    worst=$rc
  elif [ "$rc" -eq 5 ] && [ "$worst" -eq 0 ]; then
    worst=5
  fi
done
[ "$worst" -ne 0 ] && [ "$worst" -ne 5 ] && verdict=error
echo "accel-drc: ${#boards[@]} board(s), verdict $verdict, exit code $worst"
finish "$worst" "$verdict"
