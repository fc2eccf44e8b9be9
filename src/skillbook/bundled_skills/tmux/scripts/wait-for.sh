#!/bin/sh
# Usage: wait-for.sh -t TARGET -p REGEX [-T SECONDS] [-i INTERVAL] [-L SOCKET] [-S LINES]
# Polls `tmux capture-pane` of TARGET until the extended regex REGEX matches.
# Exit 0 and print the matching lines on success; exit 1 and print the last 20
# lines of the pane on timeout; exit 2 on bad usage or a missing session.
# Defaults: -T 30 seconds, -i 0.5 seconds, -S 200 lines of scrollback searched.
set -eu

target=""
pattern=""
timeout=30
interval=0.5
socket=""
lines=200
usage() {
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while getopts t:p:T:i:L:S:h opt; do
    case $opt in
        t) target=$OPTARG ;;
        p) pattern=$OPTARG ;;
        T) timeout=$OPTARG ;;
        i) interval=$OPTARG ;;
        L) socket=$OPTARG ;;
        S) lines=$OPTARG ;;
        *) usage ;;
    esac
done
[ -n "$target" ] && [ -n "$pattern" ] || usage
case $timeout in '' | *[!0-9]*) echo "wait-for.sh: -T takes whole seconds" >&2; exit 2 ;; esac
case $lines in '' | *[!0-9]*) echo "wait-for.sh: -S takes a line count" >&2; exit 2 ;; esac

tm() {
    if [ -n "$socket" ]; then
        tmux -L "$socket" "$@"
    else
        tmux "$@"
    fi
}

if ! tm has-session -t "$target" 2>/dev/null; then
    echo "wait-for.sh: no tmux session for target '$target'" >&2
    exit 2
fi

# Wall-clock deadline, so slow captures do not stretch the timeout.
deadline=$(( $(date +%s) + timeout ))
while :; do
    if ! screen=$(tm capture-pane -p -J -t "$target" -S "-$lines" 2>/dev/null); then
        echo "wait-for.sh: target '$target' went away" >&2
        exit 1
    fi
    if matches=$(printf '%s\n' "$screen" | grep -E -- "$pattern"); then
        printf '%s\n' "$matches"
        exit 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "wait-for.sh: timed out after ${timeout}s waiting for /$pattern/ in $target; last lines:" >&2
        printf '%s\n' "$screen" | tail -n 20 >&2
        exit 1
    fi
    sleep "$interval"
done
