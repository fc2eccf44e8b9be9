#!/usr/bin/env bash
# Usage: api.sh [-d BODY_FILE] [-H 'Name: value']... [-o OUT_FILE] [-n ATTEMPTS] [-k IDEMPOTENCY_KEY] METHOD URL
# Calls a JSON HTTP API with curl. Auth comes from an environment variable and is
# passed to curl on stdin, so it never appears in the process list.
# Retries timeouts, connection errors and HTTP 408/429/500/502/503/504, honouring
# Retry-After (seconds or HTTP date); POST/PATCH are retried only with -k.
# Body goes to stdout (or -o FILE); "HTTP <code>" and rate-limit headers to stderr.
# Exit 0 for 1xx-3xx, 22 for HTTP >= 400 (as curl -f), curl's code for transport errors.
# Environment:
#   API_TOKEN_VAR    name of the variable holding the secret (default API_TOKEN)
#   API_AUTH_HEADER  header to send it in (default Authorization)
#   API_AUTH_SCHEME  prefix for Authorization (default Bearer; empty for none)
#   API_MAX_WAIT     longest single wait in seconds (default 120)
#   API_MAX_TIME     time limit per attempt in seconds (default 60)
set -euo pipefail

usage() {
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

body_file=""
out_file=""
attempts=5
idem_key=""
extra_headers=()
while getopts d:H:o:n:k:h opt; do
    case $opt in
        d) body_file=$OPTARG ;;
        H) extra_headers+=(-H "$OPTARG") ;;
        o) out_file=$OPTARG ;;
        n) attempts=$OPTARG ;;
        k) idem_key=$OPTARG ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
method=$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')
url=$2
case $attempts in '' | *[!0-9]* | 0) echo "api.sh: -n takes a positive number" >&2; exit 2 ;; esac
if [ -n "$body_file" ] && [ ! -r "$body_file" ]; then
    echo "api.sh: cannot read body file $body_file" >&2
    exit 2
fi

token_var=${API_TOKEN_VAR:-API_TOKEN}
auth_header=${API_AUTH_HEADER:-Authorization}
scheme=${API_AUTH_SCHEME-Bearer}
max_wait=${API_MAX_WAIT:-120}
token=${!token_var:-}
if [ -z "$token" ]; then
    echo "api.sh: note: \$$token_var is empty, sending no credentials" >&2
fi

retry_unsafe=0
case $method in
    GET | HEAD | PUT | DELETE | OPTIONS) retry_unsafe=1 ;;
esac
if [ -n "$idem_key" ]; then
    retry_unsafe=1
    extra_headers+=(-H "Idempotency-Key: $idem_key")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

curl_args=(
    --silent --show-error --location --max-redirs 5
    --connect-timeout 10 --max-time "${API_MAX_TIME:-60}"
    -H 'Accept: application/json'
    -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}'
)
case $method in
    GET) ;;
    # -X HEAD would make curl wait for a body that never comes.
    HEAD) curl_args+=(--head) ;;
    *) curl_args+=(-X "$method") ;;
esac
if [ -n "$body_file" ]; then
    curl_args+=(-H 'Content-Type: application/json' --data-binary "@$body_file")
fi
if [ ${#extra_headers[@]} -gt 0 ]; then
    curl_args+=("${extra_headers[@]}")
fi

auth_line() {
    if [ -n "$token" ]; then
        if [ "$auth_header" = "Authorization" ] && [ -n "$scheme" ]; then
            printf '%s: %s %s\n' "$auth_header" "$scheme" "$token"
        else
            printf '%s: %s\n' "$auth_header" "$token"
        fi
    fi
}

# Seconds to wait before the next try: Retry-After if present, else 2^n + jitter.
wait_seconds() {
    local n=$1 value when now secs
    value=$(grep -i '^retry-after:' "$tmp/headers" 2>/dev/null | tail -n 1 | cut -d: -f2- | tr -d ' \r' || true)
    if [[ $value =~ ^[0-9]+$ ]]; then
        secs=$value
    elif [ -n "$value" ]; then
        value=$(grep -i '^retry-after:' "$tmp/headers" | tail -n 1 | cut -d: -f2- | sed 's/^ *//' | tr -d '\r')
        now=$(date +%s)
        when=$(date -d "$value" +%s 2>/dev/null \
            || date -j -f '%a, %d %b %Y %H:%M:%S %Z' "$value" +%s 2>/dev/null \
            || echo "$now")
        secs=$((when - now))
    else
        secs=$(((1 << (n - 1)) + RANDOM % 2))
    fi
    [ "$secs" -lt 1 ] && secs=1
    [ "$secs" -gt "$max_wait" ] && secs=$max_wait
    echo "$secs"
}

report_limits() {
    grep -i -E '^(x-)?ratelimit-(remaining|reset|limit):' "$tmp/headers" 2>/dev/null \
        | tr -d '\r' | sed 's/^/  /' >&2 || true
}

attempt=1
while :; do
    : >"$tmp/headers"
    rc=0
    code=$(auth_line | curl "${curl_args[@]}" -H @- "$url") || rc=$?
    transient=0
    if [ "$rc" -ne 0 ]; then
        case $rc in 7 | 28 | 35 | 52 | 55 | 56) transient=1 ;; esac
        echo "api.sh: curl exit $rc (attempt $attempt/$attempts)" >&2
    else
        echo "HTTP $code (attempt $attempt/$attempts)" >&2
        report_limits
        case $code in 408 | 429 | 500 | 502 | 503 | 504) transient=1 ;; esac
    fi
    if [ "$transient" -eq 1 ] && [ "$retry_unsafe" -eq 1 ] && [ "$attempt" -lt "$attempts" ]; then
        secs=$(wait_seconds "$attempt")
        echo "api.sh: retrying in ${secs}s" >&2
        sleep "$secs"
        attempt=$((attempt + 1))
        continue
    fi
    if [ "$transient" -eq 1 ] && [ "$retry_unsafe" -eq 0 ]; then
        echo "api.sh: not retrying $method without -k IDEMPOTENCY_KEY (it may have been applied)" >&2
    fi
    break
done

if [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
if [ -n "$out_file" ]; then
    cp "$tmp/body" "$out_file"
else
    cat "$tmp/body"
    # Keep the shell prompt on its own line when the body has no final newline.
    [ -s "$tmp/body" ] && [ "$(tail -c 1 "$tmp/body" | od -An -c | tr -d ' ')" != '\n' ] && echo
fi
if [ "$code" -ge 400 ]; then
    exit 22
fi
exit 0
