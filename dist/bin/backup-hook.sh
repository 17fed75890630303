#!/usr/bin/env bash
#
# backup-hook.sh: pause exporting, run a backup command, and always resume exporting afterwards.
#
#   backup-hook.sh [--soft] [--retries N] [--gateway URL] [--ca-cert FILE] [--timeout DURATION]
#                  [--stop-timeout SECONDS] -- <backup command...>
#
# Steps: 1. `admin exporting pause [--soft] --retries N` (only the failed pairs are retried);
#        2. the backup command, only if the pause succeeded on every pair;
#        3. `admin exporting resume --retries N`, always: after a failed pause (to undo a partial one),
#           after a failed backup, and when this script gets SIGINT or SIGTERM: the running step (its
#           whole process group) gets SIGTERM, and SIGKILL after --stop-timeout seconds (default 30), so
#           a backup that ignores SIGTERM cannot hold exporting paused. Further signals are ignored
#           while resuming.
#
# When the pause never took effect anywhere (the gateway refused it, e.g. a missing token: a 4xx changes
# nothing; or no round of it reached the gateway, e.g. a wrong --gateway), there is nothing to resume: the hook
# says "nothing was paused" and exits 3 without a resume call.
#
# Exit codes: 0 everything succeeded; 2 usage error or no CLI found; 3 pause failed (backup not run);
#             4 backup command failed; 5 resume failed (exporting may still be paused: act now);
#             128+signal when interrupted (130 SIGINT, 143 SIGTERM) and resumed. A failed resume wins.
#
# The CLI is, in this order: java -jar "$SLUICE_JAR"; <this dir>/../target/sluice.jar (source tree);
# <this dir>/../sluice.jar (installed, e.g. /opt/sluice/sluice.jar); `sluice` on PATH (called as
# `sluice admin ...`). Java is "$JAVA" or "$JAVA_HOME/bin/java" or java on PATH, run with
# $SLUICE_CLI_JAVA_OPTS (default: C1 only and the serial GC, which start a short-lived CLI fastest).
# The gateway, token and CA bundle may also come from SLUICE_GATEWAY, SLUICE_TOKEN and SLUICE_CA_CERT
# (the token is never put on a command line, where ps would show it). --ca-cert (or SLUICE_CA_CERT) is
# the PEM bundle of the CAs to trust for an https:// gateway, passed through to the CLI.
#
# --print-plan prints the calls it would make, tab-separated (cli, pause, backup, resume and
# stop-timeout lines), and exits; tests use it to check the Kubernetes CronJob's arguments against the real CLI.

set -u -o pipefail

readonly PROG="backup-hook"
readonly HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage()
{
    cat <<USAGE
usage: backup-hook.sh [--soft] [--retries N] [--gateway URL] [--ca-cert FILE] [--timeout DURATION] [--stop-timeout SECONDS] [--print-plan] -- <backup command...>
  --soft              soft pause: exporters keep exporting, positions are not acknowledged (nothing is compacted)
  --retries N         retries of the failed or timed-out pairs, for the pause and for the resume (default 3)
  --gateway URL       management URL of the gateway (default: \$SLUICE_GATEWAY or http://127.0.0.1:9600)
  --ca-cert FILE      PEM bundle of the CAs to trust for an https:// gateway (default: \$SLUICE_CA_CERT)
  --timeout DURATION  timeout of one call to the gateway, e.g. 30s (default: the CLI's)
  --stop-timeout S    on SIGINT/SIGTERM, seconds between SIGTERM and SIGKILL of the running step (default 30)
  --print-plan        print the calls it would make and exit
exit: 0 ok, 2 usage, 3 pause failed (no backup), 4 backup failed, 5 resume failed, 130/143 interrupted
USAGE
}

usage_error()
{
    echo "$PROG: $1" >&2
    usage >&2
    exit 2
}

soft=0
retries=3
gateway=""
ca_cert=""
timeout=""
stop_timeout=30
print_plan=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --soft) soft=1; shift ;;
        --retries)
            [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || usage_error "--retries needs a number of retries (0 or more)"
            retries="$2"; shift 2 ;;
        --retries=*)
            retries="${1#*=}"
            [[ "$retries" =~ ^[0-9]+$ ]] || usage_error "--retries needs a number of retries (0 or more)"
            shift ;;
        --gateway)
            [[ $# -ge 2 && -n "$2" ]] || usage_error "--gateway needs a URL"
            gateway="$2"; shift 2 ;;
        --gateway=*) gateway="${1#*=}"; shift ;;
        --ca-cert)
            [[ $# -ge 2 && -n "$2" ]] || usage_error "--ca-cert needs a PEM file"
            ca_cert="$2"; shift 2 ;;
        --ca-cert=*) ca_cert="${1#*=}"; shift ;;
        --timeout)
            [[ $# -ge 2 && -n "$2" ]] || usage_error "--timeout needs a duration, e.g. 30s"
            timeout="$2"; shift 2 ;;
        --timeout=*) timeout="${1#*=}"; shift ;;
        --stop-timeout)
            [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || usage_error "--stop-timeout needs a number of seconds"
            stop_timeout="$2"; shift 2 ;;
        --stop-timeout=*)
            stop_timeout="${1#*=}"
            [[ "$stop_timeout" =~ ^[0-9]+$ ]] || usage_error "--stop-timeout needs a number of seconds"
            shift ;;
        --print-plan) print_plan=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        *) usage_error "unknown option '$1' (the backup command goes after --)" ;;
    esac
done
[[ $# -gt 0 ]] || usage_error "no backup command given after --"
backup_command=("$@")

java_bin="${JAVA:-}"
if [[ -z "$java_bin" ]]; then
    if [[ -n "${JAVA_HOME:-}" ]]; then java_bin="$JAVA_HOME/bin/java"; else java_bin="java"; fi
fi

read -r -a java_opts <<< "${SLUICE_CLI_JAVA_OPTS--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
cli=()
if [[ -n "${SLUICE_JAR:-}" ]]; then
    cli=("$java_bin" "${java_opts[@]}" -jar "$SLUICE_JAR" admin)
elif [[ -f "$HERE/../target/sluice.jar" ]]; then
    cli=("$java_bin" "${java_opts[@]}" -jar "$HERE/../target/sluice.jar" admin)
elif [[ -f "$HERE/../sluice.jar" ]]; then
    cli=("$java_bin" "${java_opts[@]}" -jar "$HERE/../sluice.jar" admin)
elif command -v sluice >/dev/null 2>&1; then
    cli=(sluice admin)
else
    echo "$PROG: cannot find the sluice CLI: set SLUICE_JAR to sluice.jar, or put 'sluice' on PATH" >&2
    exit 2
fi

common=(--retries "$retries")
[[ -n "$gateway" ]] && common+=(--gateway "$gateway")
[[ -n "$ca_cert" ]] && common+=(--ca-cert "$ca_cert")
[[ -n "$timeout" ]] && common+=(--timeout "$timeout")
pause_args=(exporting pause)
[[ $soft -eq 1 ]] && pause_args+=(--soft)
pause_args+=("${common[@]}")
resume_args=(exporting resume "${common[@]}")

if [[ $print_plan -eq 1 ]]; then
    (IFS=$'\t'; echo "cli	${cli[*]}"; echo "pause	${pause_args[*]}"; echo "backup	${backup_command[*]}";
     echo "resume	${resume_args[*]}"; echo "stop-timeout	${stop_timeout}")
    exit 0
fi

step="start"
child=""
pause_attempted=0
resumed=0

# Each step runs in the background in its own process group (job control), and the script waits for
# it: a signal then interrupts the wait at once (a foreground child would delay the trap until it
# ends), and the trap can stop the step with everything it started.
set -m
run_child()
{
    "$@" &
    child=$!
    wait "$child"
    local rc=$?
    child=""
    return $rc
}

describe_cli_exit()
{
    case "$1" in
        1) echo "some pairs failed" ;;
        2) echo "some pairs timed out" ;;
        3) echo "refused: check the arguments and the token (SLUICE_TOKEN)" ;;
        4) echo "gateway unreachable: check --gateway or SLUICE_GATEWAY" ;;
        *) echo "the CLI ended with exit $1" ;;
    esac
}

resume_and_exit()
{
    local code=$1
    trap '' INT TERM
    if [[ $pause_attempted -eq 1 && $resumed -eq 0 ]]; then
        resumed=1
        "${cli[@]}" "${resume_args[@]}"
        local rc=$?
        if [[ $rc -ne 0 ]]; then
            echo "$PROG: resume failed (exit $rc): $(describe_cli_exit $rc); exporting may still be paused:" \
                "run '${cli[*]} ${resume_args[*]}' until it exits 0" >&2
            exit 5
        fi
    fi
    exit "$code"
}

on_signal()
{
    local name=$1 code=$2
    trap '' INT TERM
    echo "$PROG: interrupted by SIG$name during the $step step; stopping it and resuming exporting" >&2
    if [[ -n "$child" ]] && kill -0 -- "-$child" 2>/dev/null; then
        kill -TERM -- "-$child" 2>/dev/null
        local waited=0
        while kill -0 -- "-$child" 2>/dev/null && [[ $waited -lt $((stop_timeout * 10)) ]]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        if kill -0 -- "-$child" 2>/dev/null; then
            echo "$PROG: the $step step ignored SIGTERM for ${stop_timeout}s; killing it" >&2
            kill -KILL -- "-$child" 2>/dev/null
        fi
        wait "$child" 2>/dev/null
    fi
    resume_and_exit "$code"
}

trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM

step="pause"
pause_attempted=1
# The pause's stderr also goes to a file, to tell afterwards whether any of its rounds reached the gateway.
pause_err="$(mktemp "${TMPDIR:-/tmp}/backup-hook-pause.XXXXXX")"
run_child "${cli[@]}" "${pause_args[@]}" 2> >(tee -a "$pause_err" >&2)
rc=$?
# Every round but the last one reports an unreachable gateway on its own line; the last one ends with exit 4.
unreachable_rounds=$(grep -c -E 'round [0-9]+/[0-9]+: gateway unreachable' "$pause_err" 2>/dev/null)
rm -f "$pause_err"
if [[ $rc -eq 3 || ( $rc -eq 4 && ${unreachable_rounds:-0} -ge $retries ) ]]; then
    # Refused (nothing changes on a 4xx), or never reached: no pair was paused, so there is nothing to resume.
    pause_attempted=0
    echo "$PROG: pause failed (exit $rc): $(describe_cli_exit $rc); nothing was paused, the backup command was" \
        "not run" >&2
    exit 3
fi
if [[ $rc -ne 0 ]]; then
    echo "$PROG: pause failed (exit $rc): $(describe_cli_exit $rc); the backup command was not run," \
        "resuming to undo a partial pause" >&2
    resume_and_exit 3
fi

step="backup"
run_child "${backup_command[@]}"
rc=$?
result=0
if [[ $rc -ne 0 ]]; then
    echo "$PROG: backup command failed (exit $rc): ${backup_command[*]}" >&2
    result=4
fi

step="resume"
resume_and_exit "$result"
